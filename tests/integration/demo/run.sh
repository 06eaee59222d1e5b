#!/usr/bin/env bash
# The main job of `make run`: the threat model's attack, natively and in cbox-run, then a real
# program. usage: run.sh CBOX_RUN WORKDIR
set -euo pipefail
CBOX_RUN=$(realpath "$1")
WORK=$2
SRC=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
cd "$WORK"
# The scripts run from the working folder, which the sandbox shows writable; the source tree
# itself may be hidden there (a checkout under /tmp, the guest's own tmpfs).
cp "$SRC"/attack.py "$SRC"/listener.py "$SRC"/analyse.py .
HERE=$PWD

# The key the attack goes for: the caller's own, or a throwaway one made for the demo.
KEY="$HOME/.ssh/id_ed25519"
MADE_KEY=0
if [ ! -e "$KEY" ]; then
	mkdir -p "$HOME/.ssh"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\ncbox-demo-throwaway-key\n-----END OPENSSH PRIVATE KEY-----\n' >"$KEY"
	chmod 600 "$KEY"
	MADE_KEY=1
fi
rm -f loot.bin port
python3 "$HERE/listener.py" port loot.bin &
LISTENER=$!
cleanup() {
	kill "$LISTENER" 2>/dev/null || true
	[ "$MADE_KEY" = 1 ] && rm -f "$KEY"
	return 0
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
PORT=$(cat port)

echo "== The attack, run directly on the host (what an agent's shell would allow):"
API_TOKEN=sk-demo-1234 python3 "$HERE/attack.py" "$KEY" "$PORT" | sed 's/^/   /'
sleep 0.2
echo "   the listener on 127.0.0.1:$PORT received $(wc -c <loot.bin) bytes"
: >loot.bin

echo "== The same attack under cbox-run (API_TOKEN set in cbox-run's own environment):"
API_TOKEN=sk-demo-1234 "$CBOX_RUN" -- python3 "$HERE/attack.py" "$KEY" "$PORT" | sed 's/^/   /'
sleep 0.2
echo "   the listener on 127.0.0.1:$PORT received $(wc -c <loot.bin) bytes"
echo "   stopped by: an environment of PATH/HOME/TERM/LANG only; $HOME hidden (the key does not"
echo "   exist inside); a network namespace of its own (127.0.0.1 is the sandbox's loopback)."

echo "== A real program in the working folder ($WORK), which is writable inside:"
printf 'name,value\nalpha,3\nbeta,7.5\ngamma,1\n' >data.csv
"$CBOX_RUN" -- python3 "$HERE/analyse.py" data.csv summary.txt | sed 's/^/   /'
echo "   on the host: $(cat summary.txt)"
