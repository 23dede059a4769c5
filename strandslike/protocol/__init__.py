"""Protocol servers that expose strandslike agents to user interfaces (optional extras).

`strandslike.protocol.agui` serves the AG-UI protocol; it needs ``pip install 'strandslike[agui]'``.
"""

__all__: list[str] = []
