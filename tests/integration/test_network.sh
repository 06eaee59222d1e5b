#!/bin/bash
# cbox-run --network: none (the default) leaves the sandbox its own loopback only;
# slirp4netns[:OPTIONS] gives it a way out through slirp4netns, as rootless Podman does. Checked
# from both sides: a listener on the host's own (non-loopback) address receives what the guest
# sends, while the host's loopback (the threat model's drop box), the host's abstract unix
# sockets and, without the option, every outside address stay out of reach. Each listener
# records what it receives, so that a refusal cannot pass by the guest merely saying so.
. "$(dirname "$0")/lib.sh"
need_binaries
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY missing: install the Debian package python3"
command -v slirp4netns >/dev/null || skip "slirp4netns missing: install the Debian package slirp4netns"
# (copied beside the scratch files: the source tree may be hidden inside the sandbox)
cp "$(dirname "$0")/programs/net_peer.py" "$(dirname "$0")/demo/attack.py" "$ITEST_TMP/"
PEER="$ITEST_TMP/net_peer.py"

# The host's first global IPv4 address: what a guest reaches through slirp4netns as it would
# reach any outside host (slirp4netns connects from the host's own network namespace).
HOST_IP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')

# listen NAME ADDR: a listener on ADDR recording into $ITEST_TMP/NAME.bin; sets NAME_PORT.
PIDS=""
listen() {
	local name=$1 addr=$2
	: >"$ITEST_TMP/$name.bin"
	"$PY" "$PEER" listen "$addr" "$ITEST_TMP/$name.port" "$ITEST_TMP/$name.bin" &
	PIDS="$PIDS $!"
	for _ in $(seq 100); do [ -s "$ITEST_TMP/$name.port" ] && break; sleep 0.05; done
	printf -v "${name}_PORT" '%s' "$(cat "$ITEST_TMP/$name.port")"
}
trap 'kill $PIDS 2>/dev/null; kill_leftovers; rm -rf "$SCRATCH" "$ITEST_TMP"' EXIT
listen LOOP 127.0.0.1
[ -n "$HOST_IP" ] && listen OUT "$HOST_IP"
ABSTRACT=cbox-test-net-$$
: >"$ITEST_TMP/abstract.bin"
"$PY" "$PEER" listen-abstract "$ABSTRACT" "$ITEST_TMP/abstract.bin" &
PIDS="$PIDS $!"
sleep 0.3

# received NAME TEXT: yes when the listener NAME got TEXT, after the 0.2 s a refused attempt
# leaves for anything to arrive (the checks that nothing did).
received() {
	sleep 0.2
	grep -qF "$2" "$ITEST_TMP/$1.bin" && echo yes || echo no
}

# arrived NAME TEXT: yes as soon as the listener NAME has TEXT, no after 5 s (the checks that
# something did: the listener records a connection's bytes once it ends, which may come a moment
# after the guest's exit).
arrived() {
	for _ in $(seq 50); do
		grep -qF "$2" "$ITEST_TMP/$1.bin" && { echo yes; return; }
		sleep 0.1
	done
	echo no
}

# Control: natively, each of them is reachable (so the refusals below cannot pass vacuously).
CFG=native
check "the host's loopback listener is reachable natively" sent \
	"$("$PY" "$PEER" send 127.0.0.1 "$LOOP_PORT" control-loop)"
check "the host's abstract socket is reachable natively" sent \
	"$("$PY" "$PEER" send-abstract "$ABSTRACT" control-abstract)"
check "  ... and it recorded it" yes "$(arrived abstract control-abstract)"

# walls TAG (under a --network slirp4netns configuration): the host's loopback behind 10.0.2.2
# and a host abstract socket are out of reach, their listeners get nothing, and resolv.conf
# names slirp4netns's DNS forwarder.
walls() {
	local tag=$1
	box "$PY" "$PEER" send 10.0.2.2 "$LOOP_PORT" "gw-$tag"
	check "the host's loopback is not behind 10.0.2.2" "Network is unreachable" "$OUT"
	box "$PY" "$PEER" send-abstract "$ABSTRACT" "abstract-$tag"
	check "the host's abstract unix socket is out of reach" "Connection refused" "$OUT"
	check "the host's listeners received nothing" "no no" \
		"$(received LOOP "gw-$tag") $(received abstract "abstract-$tag")"
	box /bin/cat /etc/resolv.conf
	check_match "/etc/resolv.conf names slirp4netns's DNS forwarder" "^nameserver 10\\.0\\.2\\.3$" \
		"$(printf '%s\n' "$OUT" | head -n 1)"
}

t_net_out() {
	local base=$CFG tag
	tag=$(printf '%s' "$CFG" | tr -c 'a-z' '-')
	if [ -z "$HOST_IP" ]; then
		skip_check "a way out" "the host has no global IPv4 address to listen on"
	else
		CFG="$base --network slirp4netns"
		box "$PY" "$PEER" send "$HOST_IP" "$OUT_PORT" "out-$tag"
		check "--network slirp4netns: the guest reaches the host's $HOST_IP" sent "$OUT"
		check "  ... which received it" yes "$(arrived OUT "out-$tag")"
		CFG=$base
		box "$PY" "$PEER" send "$HOST_IP" "$OUT_PORT" "none-$tag"
		check "without --network the same address is unreachable" \
			"Network is unreachable" "$OUT"
		check "  ... and nothing arrived" no "$(received OUT "none-$tag")"
	fi
	CFG="$base --network slirp4netns"
	# The threat model's attack, with the network on: its POST to 127.0.0.1 reaches the
	# sandbox's own loopback, and the host's loopback is not behind 10.0.2.2 either.
	CBOX_FAKE_API_KEY=sk-net-$tag box "$PY" "$ITEST_TMP/attack.py" /nonexistent "$LOOP_PORT"
	check_match "the attack's POST to 127.0.0.1 stays inside" \
		"step 3 \\(exfiltration\\): cannot reach 127.0.0.1:$LOOP_PORT: Connection refused" "$OUT"
	walls "$tag"
	box /bin/sh -c 'cat /sys/class/net/tap0/mtu 2>/dev/null || ip -o link show tap0'
	check_match "tap0 has the default MTU" "65520" "$OUT"
	# Opted into: the host's loopback at 10.0.2.2.
	CFG="$base --network slirp4netns:allow_host_loopback=true,mtu=1500"
	box "$PY" "$PEER" send 10.0.2.2 "$LOOP_PORT" "allowed-$tag"
	check "allow_host_loopback=true: 10.0.2.2 is the host's 127.0.0.1" sent "$OUT"
	check "  ... which received it" yes "$(arrived LOOP "allowed-$tag")"
	CFG=$base
	check "no slirp4netns is left after cbox-run" "" "$(pgrep -x slirp4netns)"
	box /bin/sh -c 'cat /etc/resolv.conf'
	check "without --network /etc/resolv.conf is the host's" "$(cat /etc/resolv.conf)" "$OUT"
}

# enable_ipv6: the program starts with its IPv6 address (slirp4netns's SLAAC prefix fd00::/64)
# and a route to slirp4netns's hosts, as Podman starts it: before, they came 1.7-3.5 s after the
# program did, which meanwhile got ENETUNREACH for every IPv6 connect.
t_net_ipv6() {
	local base=$CFG
	CFG="$base --network slirp4netns:enable_ipv6=true"
	box "$PY" -c 'import socket
print(any(l.split()[5] == "tap0" and l.split()[3] == "00" and not int(l.split()[4], 16) & 0x48
          for l in open("/proc/net/if_inet6")))
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.connect(("fd00::3", 53))
print(s.getsockname()[0].startswith("fd00::"))'
	check "enable_ipv6: tap0 has its global IPv6 address when the program starts, and a route" \
		"True
True" "$OUT"
	CFG=$base
}

t_net_errors() {
	CFG="--network slirp4netns:bogus=1"
	box /bin/true
	check "an unknown option is refused" 125 "$STATUS"
	check_match "  ... by name" "unknown slirp4netns option 'bogus'" "$ERR"
	CFG="--network slirp4netns:mtu=70000"
	box /bin/true
	check_match "an MTU past slirp4netns's limit is refused" "mtu=70000: expected 1280 to 65521" "$ERR"
	CFG="--network host"
	box /bin/true
	check "--network host is refused" 125 "$STATUS"
	check_match "  ... saying why" "abstract unix sockets" "$ERR"
	CFG="--network slirp4netns"
	CBOX_SLIRP4NETNS=/nonexistent/slirp4netns box /bin/true
	check "a missing slirp4netns fails the start" 125 "$STATUS"
	check_match "  ... naming the package" "Debian's package slirp4netns" "$ERR"
	# One that never says it is ready: the start gives up after 10 s and kills it.
	printf '#!/bin/bash\nexec -a cbox-net-test-%s sleep 600\n' "$$" >"$ITEST_TMP/hang.sh"
	chmod +x "$ITEST_TMP/hang.sh"
	CBOX_SLIRP4NETNS=$ITEST_TMP/hang.sh box /bin/true
	check "a slirp4netns that hangs fails the start" 125 "$STATUS"
	check_match "  ... after its 10 s" "did not start within 10 s" "$ERR"
	check "  ... and is killed" "" "$(pgrep -f "cbox-net-test-$$")"
	# Run by a user: slirp4netns opens /dev/net/tun as that user, which some hosts keep
	# root's (0600, as this VM); there it must fail plainly, elsewhere work.
	if [ "$(id -u)" != 0 ]; then
		skip_check "--network run by a user" "needs root to become uid 1000"
	else
		local can
		can=$(setpriv --reuid 1000 --regid 1000 --clear-groups sh -c 'exec 3<>/dev/net/tun' \
			2>/dev/null && echo yes || echo no)
		CFG="--network slirp4netns"
		local out
		out=$(cd /tmp && setpriv --reuid 1000 --regid 1000 --clear-groups \
			timeout 60 "$CBOX_RUN" --network slirp4netns -- /bin/cat /etc/resolv.conf 2>&1)
		STATUS=$?
		if [ "$can" = yes ]; then
			check "run by a user, --network works" 0 "$STATUS"
			check_match "  ... with the sandbox's resolv.conf" "nameserver 10\\.0\\.2\\.3" "$out"
		else
			check "run by a user without access to /dev/net/tun: the start fails" 125 "$STATUS"
			check_match "  ... saying so" "/dev/net/tun.*Permission denied" "$out"
		fi
	fi
	CFG=""
}

# The ns tier (plain namespaces, as root): the container joins a network namespace cbox-run made
# and slirp4netns brought up, by path; the same way out, and the same walls.
t_net_ns() {
	[ "$(id -u)" = 0 ] || { skip_check "--tier=ns --network" "the ns tier runs as root"; return; }
	local tag=ns-$$
	CFG="--tier=ns --network slirp4netns"
	if [ -n "$HOST_IP" ]; then
		box "$PY" "$PEER" send "$HOST_IP" "$OUT_PORT" "out-$tag"
		check "the guest reaches the host's $HOST_IP" sent "$OUT"
		check "  ... which received it" yes "$(arrived OUT "out-$tag")"
	fi
	walls "$tag"
	CFG=""
	check "no slirp4netns is left" "" "$(pgrep -x slirp4netns)"
}

# serve_published N -p ...: cbox-run --network slirp4netns with the -p's given, in the background
# (PUB), its guest serving "pub-PORT" on the guest's ports 8000 to 8000+N-1; returns once they
# listen. AT is the host address and port cbox-run said it took for guest port 8000, if any.
serve_published() {
	local n=$1 script="" i
	shift
	CFG="--network slirp4netns $*"
	for ((i = 0; i < n; i++)); do
		script="$script $PY $PEER serve $((8000 + i)) pub-$((8000 + i)) &"
	done
	timeout 30 "$CBOX_RUN" --network slirp4netns "$@" -- /bin/sh -c "$script wait" \
		>"$SCRATCH/pub.out" 2>"$SCRATCH/pub.err" </dev/null &
	PUB=$!
	for _ in $(seq 100); do
		[ "$(grep -c listening "$SCRATCH/pub.out")" -ge "$n" ] && break
		sleep 0.1
	done
	AT=$(sed -n "s|.*: the guest's port 8000/tcp is at ||p" "$SCRATCH/pub.err")
}

# -p forms where cbox-run picks the host port: PORT alone, HOSTIP::PORT, a range of host ports
# for one guest port (the first free one); and ranges, port for port.
t_net_publish_chosen() {
	local hp holder
	serve_published 1 -p 8000
	check_match "-p PORT: cbox-run names the free port of 127.0.0.1 it took" \
		'^127\.0\.0\.1:[0-9]+$' "$AT"
	check "  ... where the guest's server answers" pub-8000 \
		"$("$PY" "$PEER" recv "${AT%:*}" "${AT#*:}")"
	wait "$PUB"
	check "  ... and cbox-run ends with it" 0 "$?"
	if [ -n "$HOST_IP" ]; then
		serve_published 1 -p "$HOST_IP::8000"
		check_match "-p HOSTIP::PORT: a free port of HOSTIP" "^$HOST_IP:[0-9]+\$" "$AT"
		check "  ... where the guest's server answers" pub-8000 \
			"$("$PY" "$PEER" recv "${AT%:*}" "${AT#*:}")"
		wait "$PUB"
	fi
	hp=$("$PY" "$PEER" free-port 2)
	serve_published 2 -p "$hp-$((hp + 1)):8000-8001"
	check "-p HOSTPORT-END:PORT-END: each guest port at its host port" "pub-8000 pub-8001" \
		"$("$PY" "$PEER" recv 127.0.0.1 "$hp") $("$PY" "$PEER" recv 127.0.0.1 $((hp + 1)))"
	wait "$PUB"
	hp=$("$PY" "$PEER" free-port 2)
	"$PY" "$PEER" hold "$hp" >"$SCRATCH/hold.out" &
	holder=$!
	for _ in $(seq 50); do grep -q held "$SCRATCH/hold.out" && break; sleep 0.1; done
	serve_published 1 -p "$hp-$((hp + 1)):8000"
	check "-p HOSTPORT-END:PORT, the first taken: the next one" "127.0.0.1:$((hp + 1))" "$AT"
	check "  ... where the guest's server answers" pub-8000 \
		"$("$PY" "$PEER" recv 127.0.0.1 $((hp + 1)))"
	kill "$holder"
	wait "$PUB"
}

# -p: the guest's server at a port of the host's 127.0.0.1 (not on its other addresses unless
# asked), through slirp4netns's API; the errors.
t_net_publish() {
	local hp out_log="$SCRATCH/serve.out" srv tag=pub-$$
	hp=$("$PY" "$PEER" free-port)
	CFG="--platform=seccomp --network slirp4netns -p $hp:8000"
	: >"$out_log"
	# shellcheck disable=SC2086
	timeout 30 "$CBOX_RUN" $CFG -- "$PY" "$PEER" serve 8000 "$tag" >"$out_log" 2>&1 &
	srv=$!
	for _ in $(seq 100); do grep -q listening "$out_log" && break; sleep 0.1; done
	if [ -n "$HOST_IP" ]; then
		check "-p: not on the host's other addresses by default" "Connection refused" \
			"$("$PY" "$PEER" recv "$HOST_IP" "$hp")"
	fi
	check "-p HOSTPORT:PORT: the guest's server answers at the host's 127.0.0.1" "$tag" \
		"$("$PY" "$PEER" recv 127.0.0.1 "$hp")"
	wait "$srv"
	check "  ... and cbox-run ends with it" 0 "$?"
	t_net_publish_chosen
	CFG="-p $hp:8000"
	box /bin/true
	check "-p without --network is refused" 125 "$STATUS"
	check_match "  ... saying what it needs" "needs a way in: --network slirp4netns" "$ERR"
	CFG="--network slirp4netns -p 1.2.3:$hp:8000"
	box /bin/true
	check_match "a malformed -p is refused" "expected \\[\\[HOSTIP:\\]\\[HOSTPORT" "$ERR"
	CFG="--network slirp4netns -p 8000-8002:80-81"
	box /bin/true
	check_match "ranges of different sizes are refused" "the host's range and the guest's differ in size" "$ERR"
	CFG="--network slirp4netns -p $LOOP_PORT:8000"
	box /bin/echo started
	check "a host port already taken fails the start" "125 " "$STATUS $OUT"
	check_match "  ... with slirp4netns's answer" "-p $LOOP_PORT:8000: 127.0.0.1:$LOOP_PORT to 8000/tcp: slirp4netns said: .*error" "$ERR"
	check "  ... and leaves no API socket directory" "" "$(ls /tmp | grep cbox-run-slirp)"
	# cbox-run killed outright: slirp4netns leaves through its exit fd, and nothing of the
	# forwards is left in /tmp.
	CFG="--network slirp4netns -p $hp:8000"
	"$CBOX_RUN" --network slirp4netns -p "$hp:8000" -- /bin/sleep 30 </dev/null >/dev/null 2>&1 &
	local run=$!
	for _ in $(seq 50); do pgrep -x slirp4netns >/dev/null && break; sleep 0.1; done
	sleep 0.3
	kill -KILL "$run"
	wait "$run" 2>/dev/null
	for _ in $(seq 50); do pgrep -x slirp4netns >/dev/null || break; sleep 0.1; done
	check "cbox-run killed: no slirp4netns is left" "" "$(pgrep -x slirp4netns)"
	check "  ... nor its API socket directory" "" "$(ls /tmp | grep cbox-run-slirp)"
	CFG=""
}

# --allow-net: the hosts named and nothing else, through the proxy the environment names, on every
# configuration given (both tiers): what is named is reached and receives what was sent, another
# port of it, a connection around the proxy and the host's loopback do not, and a refusal is said
# on stderr; plain http goes through in origin form.
t_net_allow() {
	local base=$CFG tag
	tag=allow-$(printf '%s' "$CFG" | tr -c 'a-z' '-')
	if [ -z "$HOST_IP" ]; then
		skip_check "--allow-net" "the host has no global IPv4 address to listen on"
		return
	fi
	CFG="$base --allow-net $HOST_IP:$OUT_PORT,$HOST_IP:$HTTP_PORT"
	box "$PY" "$PEER" tunnel "$HOST_IP" "$OUT_PORT" "tun-$tag"
	check "--allow-net HOST:PORT: a tunnel through the proxy reaches it" sent "$OUT"
	check "  ... which received it" yes "$(arrived OUT "tun-$tag")"
	box "$PY" "$PEER" tunnel "$HOST_IP" "$LOOP_PORT" "port-$tag"
	check "  ... another port of the host is refused" \
		"Tunnel connection failed: 403 Forbidden" "$OUT"
	check_match "  ... and cbox-run says so" \
		"cbox-run: --allow-net: $HOST_IP:$LOOP_PORT: refused: not in the list" "$ERR"
	box "$PY" "$PEER" send "$HOST_IP" "$OUT_PORT" "direct-$tag"
	check "  ... a connection around the proxy is unreachable" "Network is unreachable" "$OUT"
	check "  ... and nothing arrived" no "$(received OUT "direct-$tag")"
	box "$PY" "$PEER" tunnel 127.0.0.1 "$LOOP_PORT" "loop-$tag"
	check "  ... the host's loopback, not named, is refused" \
		"Tunnel connection failed: 403 Forbidden" "$OUT"
	CBOX_FAKE_API_KEY=sk-net-$tag box "$PY" "$ITEST_TMP/attack.py" /nonexistent "$LOOP_PORT"
	check_match "  ... the attack's POST to 127.0.0.1 stays inside" \
		"step 3 \\(exfiltration\\): cannot reach 127.0.0.1:$LOOP_PORT: Connection refused" "$OUT"
	check "  ... and the host's loopback listener received nothing" "no no" \
		"$(received LOOP "loop-$tag") $(received LOOP "sk-net-$tag")"
	box "$PY" "$PEER" fetch "http://$HOST_IP:$HTTP_PORT/page.txt"
	check "  ... an http:// URL is fetched through it" "page-of-$$" "$OUT"
	check_match "  ... the server is asked in origin form" '"GET /page.txt HTTP/1.1" 200' \
		"$(cat "$ITEST_TMP/http.log")"
	box "$PY" "$PEER" fetch "http://$HOST_IP:$LOOP_PORT/page.txt"
	check "  ... and refused for a port not named" "HTTP Error 403: Forbidden" "$OUT"
	# The host's loopback through a name: refused unless the rule names the loopback.
	if [ -n "$LOOP_NAME" ]; then
		CFG="$base --allow-net $LOOP_NAME"
		box "$PY" "$PEER" tunnel "$LOOP_NAME" "$LOOP_PORT" "name-$tag"
		check "--allow-net NAME, NAME the host's loopback ($LOOP_NAME): refused" \
			"Tunnel connection failed: 403 Forbidden" "$OUT"
		check_match "  ... saying why" "$LOOP_NAME:$LOOP_PORT: refused: the name is the host's loopback" "$ERR"
		check "  ... and nothing arrived" no "$(received LOOP "name-$tag")"
	else
		skip_check "a name of the host's loopback is refused" "/etc/hosts names no 127.x address but localhost"
	fi
	CFG="$base --allow-net localhost:$LOOP_PORT"
	box "$PY" "$PEER" tunnel localhost "$LOOP_PORT" "localhost-$tag"
	check "--allow-net localhost:PORT opens the host's loopback port, as asked" sent "$OUT"
	check "  ... which received it" yes "$(arrived LOOP "localhost-$tag")"
	CFG=$base
	check "no cbox-proxy is left" "" "$(pgrep -x cbox-proxy)"
}

t_net_allow_errors() {
	# Run by a user: nothing needs a privilege (cbox-proxy runs as that user).
	if [ "$(id -u)" != 0 ]; then
		skip_check "--allow-net run by a user" "needs root to become uid 1000"
	elif [ -n "$HOST_IP" ]; then
		CFG="--allow-net $HOST_IP:$OUT_PORT (uid 1000)"
		local out
		# (the peer where that user may read it)
		mkdir -p "$SCRATCH/user" && cp "$PEER" "$SCRATCH/user/" && chmod 0711 "$SCRATCH" &&
			chmod 0755 "$SCRATCH/user"
		out=$(cd /tmp && as_user "$CBOX_RUN" --allow-net "$HOST_IP:$OUT_PORT" -- \
			"$PY" "$SCRATCH/user/net_peer.py" tunnel "$HOST_IP" "$OUT_PORT" "user-$$" 2>&1)
		chmod 0700 "$SCRATCH"
		check "--allow-net run by a user: a tunnel to the host named" sent "$out"
		check "  ... which received it" yes "$(arrived OUT "user-$$")"
	fi
	CFG="--allow-net exa_mple..com"
	box /bin/true
	check "--allow-net: a malformed entry is refused" 125 "$STATUS"
	check_match "  ... naming it" "--allow-net 'exa_mple..com': expected HOST" "$ERR"
	if [ -n "$HOST_IP" ]; then
		CFG="--log-level info --allow-net $HOST_IP:$OUT_PORT"
		box "$PY" "$PEER" tunnel "$HOST_IP" "$OUT_PORT" "logged-$$"
		check_match "--log-level info: each connection let through is said" \
			"cbox-run: --allow-net: $HOST_IP:$OUT_PORT: allowed \\(CONNECT\\)" "$ERR"
		CFG="--allow-net $HOST_IP:$OUT_PORT"
		box "$PY" "$PEER" tunnel "$HOST_IP" "$OUT_PORT" "quiet-$$"
		check_nomatch "  ... and only then" "allowed" "$ERR"
	fi
	CFG="--allow-net ,"
	box /bin/true
	check_match "--allow-net without an entry is refused" "--allow-net ',': expected HOST" "$ERR"
	CFG="--allow-net example.com --network slirp4netns"
	box /bin/true
	check_match "--allow-net with --network slirp4netns is refused" \
		"--allow-net limits the way out .* give one of them" "$ERR"
	# The proxy reads what the guest sends: it holds none of the caller's variables, and run by
	# root it is nobody, without groups, and cannot gain privileges.
	CFG="--allow-net example.com"
	CBOX_SECRET_OF_CALLER=sk-$$ "$CBOX_RUN" --allow-net example.com -- /bin/sleep 30 \
		</dev/null >/dev/null 2>&1 &
	local run=$! proxy=""
	for _ in $(seq 50); do
		proxy=$(pgrep -x cbox-proxy | head -n 1)
		[ -n "$proxy" ] && break
		sleep 0.1
	done
	check "cbox-proxy has none of the caller's environment" "0 bytes" \
		"$(tr '\0' '\n' <"/proc/$proxy/environ" | wc -c) bytes"
	if [ "$(id -u)" = 0 ]; then
		check "  ... and runs as nobody, no_new_privs, no groups" "65534 1 " \
			"$(awk '/^Uid:/ { u = $2 } /^NoNewPrivs:/ { n = $2 } /^Groups:/ { g = $2 }
				END { print u, n, g }' "/proc/$proxy/status")"
	fi
	kill "$run"
	wait "$run" 2>/dev/null
	box /bin/sh -c 'echo "$HTTPS_PROXY $https_proxy $HTTP_PROXY $no_proxy"'
	check "--allow-net: the environment names the proxy" \
		"http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1" "$OUT"
	CFG=""
}

# A web server on the host's own address for --allow-net's plain-http checks, and a name of the
# host's loopback from /etc/hosts other than localhost (Debian's 127.0.1.1 HOSTNAME), if any.
if [ -n "$HOST_IP" ]; then
	mkdir -p "$ITEST_TMP/www"
	echo "page-of-$$" >"$ITEST_TMP/www/page.txt"
	HTTP_PORT=$("$PY" "$PEER" free-port)
	"$PY" -m http.server --bind "$HOST_IP" --directory "$ITEST_TMP/www" "$HTTP_PORT" \
		>"$ITEST_TMP/http.log" 2>&1 &
	PIDS="$PIDS $!"
	for _ in $(seq 50); do grep -q Serving "$ITEST_TMP/http.log" && break; sleep 0.1; done
fi
LOOP_NAME=$(awk '$1 ~ /^127\./ { for (i = 2; i <= NF; i++) if ($i != "localhost" && $i !~ /^#/) { print $i; exit } }' /etc/hosts)

for_each_config t_net_out t_net_ipv6
for CFG in --platform=seccomp --platform=ptrace; do
	t_net_allow
done
if [ "$(id -u)" = 0 ]; then
	CFG=--tier=ns
	t_net_allow
else
	skip_check "--tier=ns --allow-net" "the ns tier runs as root"
fi
CFG=""
t_net_allow_errors
t_net_ns
t_net_publish
t_net_errors
finish
