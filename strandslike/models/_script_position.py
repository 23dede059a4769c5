"""Where a `ScriptedModel` in ``mode="conversation"`` stands in its script, read from the conversation it is given.

Each scripted turn has a key: its text and its tool calls (by id and name), as the assistant message it produces
holds them once parsed and stored (a session's JSON round trip included). The conversation's last assistant
message whose key is a scripted turn's tells how far the script got; a reply function's turn has no key and
counts as played by the unrecognised assistant message that follows the turn before it. When several turns have
the same key (the same text twice), the earlier assistant messages decide: the earliest turn the whole visible
conversation agrees with is taken. Assistant messages that are no scripted turn (a hook's cancel message, a
repair note) are skipped.

Tool calls get distinct ids, so the usual lookup stops at the last assistant message: the cost of a call does not
grow with the conversation unless the script repeats a turn word for word.
"""

from collections.abc import Iterable, Sequence

from ..types.content import ContentBlock, Messages

BlockKey = tuple[str | None, ...]
TurnKey = tuple[BlockKey, ...]


def content_key(content: Iterable[ContentBlock]) -> TurnKey:
    """Return the key of an assistant message's content: its text, tool calls and reasoning, in order."""
    parts: list[BlockKey] = []
    for block in content:
        if "text" in block:
            if block["text"]:  # the stream parser drops empty text blocks
                parts.append(("text", block["text"]))
        elif "toolUse" in block:
            tool_use = block["toolUse"]
            parts.append(("toolUse", tool_use.get("toolUseId"), tool_use.get("name")))
        elif "citationsContent" in block:
            text = "".join(part.get("text", "") for part in block["citationsContent"].get("content", []))
            parts.append(("text", text))
        elif "reasoningContent" in block:
            parts.append(("reasoning", block["reasoningContent"].get("reasoningText", {}).get("text")))
    return tuple(parts)


class ScriptPosition:
    """Count the turns of a script that a conversation already played.

    Args:
        keys: One key per scripted turn; None for a reply function's turn, whose content is not known in advance.
    """

    def __init__(self, keys: Sequence[TurnKey | None]) -> None:
        self._keys = list(keys)
        self._index: dict[TurnKey, list[int]] = {}
        for number, key in enumerate(self._keys):
            if key is not None:
                self._index.setdefault(key, []).append(number)

    def played(self, messages: Messages) -> int:
        """Return how many turns of the script ``messages`` holds, i.e. the index of the next turn to play."""
        unrecognised = 0
        for position in range(len(messages) - 1, -1, -1):
            message = messages[position]
            if message.get("role") != "assistant":
                continue
            candidates = self._index.get(content_key(message.get("content") or ()))
            if candidates is None:
                unrecognised += 1
                continue
            last = candidates[0] if len(candidates) == 1 else self._earliest_agreeing(messages, position, candidates)
            return last + 1 + self._reply_turns_after(last, unrecognised)
        return self._reply_turns_after(-1, unrecognised)

    def _reply_turns_after(self, last: int, unrecognised: int) -> int:
        """Return how many reply-function turns right after turn ``last`` the unrecognised messages played."""
        count = 0
        while count < unrecognised and last + 1 + count < len(self._keys) and self._keys[last + 1 + count] is None:
            count += 1
        return count

    def _earliest_agreeing(self, messages: Messages, position: int, candidates: list[int]) -> int:
        for candidate in candidates:
            if self._agrees(messages, position, candidate):
                return candidate
        return candidates[-1]  # the conversation fits none of them in order: assume the furthest

    def _agrees(self, messages: Messages, position: int, candidate: int) -> bool:
        """Whether the assistant messages before ``position`` are the turns before ``candidate``, in order."""
        expected = candidate - 1
        for index in range(position - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "assistant":
                continue
            key = content_key(message.get("content") or ())
            recognised = key in self._index
            if expected < 0:
                if recognised:
                    return False  # a scripted reply before the script's start: the script is further along
                continue
            wanted = self._keys[expected]
            if wanted is None or key == wanted:
                expected -= 1
            elif recognised:
                return False
        return True  # the conversation was complete, or trimmed at its start
