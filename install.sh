#!/usr/bin/env bash
# Fresh-machine setup: system packages (bubblewrap for the sandbox, slirp4netns for tasks that
# allow internet, iproute2 for the network tests, git, make and gcc for the built-in suite's tasks,
# chromium for the report test; podman with runc and catatonit for tasks that run in their own
# image, mmdebstrap for `evoharness env setup`), a virtual environment in .venv, evoharness with
# the test tools, the embedded models and Ray (the executor for more than one machine).
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
# The container engine, without podman's recommends: runc rather than crun (which fails where
# cgroups are in hybrid mode), and none of buildah, dbus or the rest.
need_containers=()
command -v podman >/dev/null || need_containers+=(podman runc)
[ -x /usr/libexec/podman/catatonit ] || need_containers+=(catatonit)
command -v mmdebstrap >/dev/null || need_containers+=(mmdebstrap)
if ((${#need_apt[@]} + ${#need_containers[@]})); then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    export DEBIAN_FRONTEND=noninteractive
    if ((${#need_apt[@]})); then
        $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
    fi
    if ((${#need_containers[@]})); then
        $SUDO apt-get install -y -qq --no-install-recommends "${need_containers[@]}" >/dev/null
    fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,model,model-small,ray]'
# Byte-compile evoharness's own modules, as pip does for a regular install (an editable one does
# not, and where PYTHONDONTWRITEBYTECODE is set every CLI call would compile them all again):
# package folders only, never the task and harness files they ship as data.
.venv/bin/python -c 'import compileall, os, sys
ok = True
for top in sys.argv[1:]:
    for folder, subfolders, _ in os.walk(top):  # into subpackages only
        subfolders[:] = [d for d in subfolders if os.path.isfile(os.path.join(folder, d, "__init__.py"))]
        ok = compileall.compile_dir(folder, maxlevels=0, quiet=1) and ok
sys.exit(not ok)' evoharness workspace agent tasks traces debugger manifests evolve
# Assemble the embedded model's GGUF once and check its sha256 (idempotent).
.venv/bin/evoharness model install
