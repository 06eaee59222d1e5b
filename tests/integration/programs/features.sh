# Bash features that reach the kernel in different ways; one labelled line each, so every
# feature is checked on its own. Run with `bash features.sh`.
a=(x y z)
echo "array: ${#a[@]} ${a[1]}"
echo "procsub: $(cat <(echo inner))"
cat <<END >/tmp/heredoc
heredoc: $((2 + 3))
END
cat /tmp/heredoc
echo "stdin: $(echo piped | cat /dev/stdin)"
sleep 0.1 &
wait $!
echo "wait: $?"
# The coprocess waits for a last line before it exits: bash closes CO's fds when it reaps a
# finished coprocess, which could come before the read below.
coproc CO { read -r l; echo "co-$l"; read -r _; }
echo ping >&"${CO[1]}"
read -r reply <&"${CO[0]}"
echo "coproc: $reply"
echo done >&"${CO[1]}"
trap 'echo "trap: USR1"' USR1
kill -USR1 $$
mkfifo /tmp/fifo
(echo through >/tmp/fifo &)
read -r q </tmp/fifo
echo "fifo: $q"
echo "subshell: $( (exit 4); echo $?)"
timeout 0.2 sleep 5
echo "timeout: $?"
echo "home: $HOME"
