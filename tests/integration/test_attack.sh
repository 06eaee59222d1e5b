#!/bin/bash
# The attack of the threat model (issue 3, DESIGN.md): prompt-injected Python that (1) collects
# the environment, (2) reads the caller's private SSH key, (3) POSTs both to a listener on the
# host's 127.0.0.1. Natively it succeeds (the control, so this test cannot pass vacuously);
# under cbox-run each step must come up empty and the listener must receive nothing.
. "$(dirname "$0")/lib.sh"
need_binaries
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY missing: install the Debian package python3"
# The scripts are copied next to the test's scratch files: the source tree itself may be hidden
# in the sandbox (a clone under /tmp, which is the guest's own tmpfs there).
DEMO="$ITEST_TMP/demo"
cp -r "$(cd "$(dirname "$0")" && pwd)/demo" "$DEMO"

# A throwaway key in the caller's home, unless one is there already (then that one, never
# printed: only its absence inside the sandbox is checked).
KEY="$HOME/.ssh/id_ed25519"
MADE_KEY=0
if [ ! -e "$KEY" ]; then
	mkdir -p "$HOME/.ssh"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\ncbox-test-throwaway\n-----END OPENSSH PRIVATE KEY-----\n' >"$KEY"
	MADE_KEY=1
fi
LOOT="$ITEST_TMP/loot.bin"
"$PY" "$DEMO/listener.py" "$ITEST_TMP/port" "$LOOT" &
LISTENER=$!
trap 'kill $LISTENER 2>/dev/null; [ $MADE_KEY = 1 ] && rm -f "$KEY"; rm -rf "$SCRATCH" "$ITEST_TMP"' EXIT
for _ in $(seq 100); do [ -s "$ITEST_TMP/port" ] && break; sleep 0.05; done
PORT=$(cat "$ITEST_TMP/port")
SECRET=sk-cbox-test-$$

# Control: the attack works on the host.
NATIVE=$(CBOX_FAKE_API_KEY=$SECRET "$PY" "$DEMO/attack.py" "$KEY" "$PORT")
sleep 0.3
CFG=native
check_match "the attack works natively (step 3 sends)" "step 3 \\(exfiltration\\): sent" "$NATIVE"
check "the listener received the secret natively" yes "$(grep -q "$SECRET" "$LOOT" && echo yes || echo no)"

t_attack() {
	: >"$LOOT"
	CBOX_FAKE_API_KEY=$SECRET box "$PY" "$DEMO/attack.py" "$KEY" "$PORT"
	check_status "the attack script ran" 0
	check_match "step 1: no host variable inside" "step 1 \\(environment\\): nothing to take" "$OUT"
	check_match "step 2: the key does not exist inside" \
		"step 2 \\(private key\\): cannot read $KEY: No such file or directory" "$OUT"
	check_match "step 3: 127.0.0.1 is the sandbox's own loopback" \
		"step 3 \\(exfiltration\\): cannot reach 127.0.0.1:$PORT: Connection refused" "$OUT"
	sleep 0.2
	check "the listener received nothing" 0 "$(wc -c <"$LOOT")"
	# An address outside the sandbox has no route at all.
	box "$PY" -c 'import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3)
    print("connected")
except OSError as e:
    print(e.strerror)'
	check "an outside address is unreachable" "Network is unreachable" "$OUT"
}

# The ns tier (cbox-run --tier=ns) gives the same view: it must stop the attack as well.
CONFIGS+=("--tier=ns")
for_each_config t_attack
finish
