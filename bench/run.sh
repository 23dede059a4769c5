#!/usr/bin/env bash
# Build bench/.venv (strands-agents 1.62, the ag-ui-strands adapter, and this checkout with its AG-UI extra, editable)
# and run the benchmarks.
#   bash bench/run.sh            full run (about a minute on 2 cores, plus the install)
#   bash bench/run.sh --quick    fewer repeats
#   BENCH_FRESH=1 bash bench/run.sh   delete bench/.venv first
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BENCH_FRESH:-0}" = 1 ]; then rm -rf bench/.venv; fi
"${PYTHON:-python3}" -m venv bench/.venv
bench/.venv/bin/pip install -q --disable-pip-version-check "strands-agents[openai,anthropic]==1.62.0" ag-ui-strands==1.0.2 -e ".[openai,anthropic,bedrock,agui,otel]"
[[ " $* " == *" --report "* ]] || bench/.venv/bin/python bench/bench_multiagent.py $([[ " $* " == *" --quick "* ]] && echo --quick)  # issue 4: Graph/Swarm (see bench/README.md, "Multi-agent")
[[ " $* " == *" --report "* ]] || bench/.venv/bin/python bench/bench_sessions.py $([[ " $* " == *" --quick "* ]] && echo --quick)  # issue 3: sessions (see bench/README.md, "Session benchmarks")
[[ " $* " == *" --report "* ]] || bench/.venv/bin/python bench/bench_approvals.py $([[ " $* " == *" --quick "* ]] && echo --quick)  # issue 11: approvals (see bench/README.md, "Approvals")
[[ " $* " == *" --report "* ]] || bench/.venv/bin/python bench/bench_providers.py $([[ " $* " == *" --quick "* ]] && echo --quick) || true  # issue 10: providers (see bench/README.md, "Providers")
[[ " $* " == *" --report "* ]] || bench/.venv/bin/python bench/bench_agui.py $([[ " $* " == *" --quick "* ]] && echo --quick)  # issue 9: AG-UI round trip (see bench/README.md, "AG-UI server")
[[ " $* " == *" --report "* ]] || bench/.venv/bin/python bench/bench_tracing.py $([[ " $* " == *" --quick "* ]] && echo --quick)  # issue 14: tracing (see bench/README.md, "Tracing benchmark")
exec bench/.venv/bin/python bench/bench_core.py "$@"
