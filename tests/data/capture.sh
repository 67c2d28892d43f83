#!/usr/bin/env bash
# Re-captures the real tool outputs the parser tests read (run as root, from anywhere).
# iperf3 runs on loopback; ping runs between two throwaway namespaces in 198.19.251.0/24
# (irtest-cap-a/-b, removed on exit) so loss and unreachability are real, not typed in.
# tests/test_parse.py pins figures read off these files: update it after re-capturing.
set -euo pipefail
cd "$(dirname "$0")"
A=irtest-cap-a B=irtest-cap-b PORT=15301
cleanup() { ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add "$A"; ip netns add "$B"
ip link add irtcap-a netns "$A" type veth peer name irtcap-b netns "$B"
ip -n "$A" addr add 198.19.251.1/24 dev irtcap-a; ip -n "$B" addr add 198.19.251.2/24 dev irtcap-b
ip -n "$A" link set irtcap-a up; ip -n "$B" link set irtcap-b up
ip -n "$A" link set lo up; ip -n "$B" link set lo up
inA() { ip netns exec "$A" "$@"; }
inB() { ip netns exec "$B" "$@"; }

# iperf3: forward and reverse (-R, with the server's output: the sender's RTT and cwnd are there)
inB iperf3 -s -1 -p $PORT --json >/dev/null & sleep 0.5
inA iperf3 -c 198.19.251.2 -p $PORT -t 2 -O 1 --json --get-server-output > iperf3_forward.json
inB iperf3 -s -1 -p $PORT --json >/dev/null & sleep 0.5
inA iperf3 -c 198.19.251.2 -p $PORT -t 2 -O 1 -R --json --get-server-output > iperf3_reverse.json
inB iperf3 -s -1 -p $PORT --json >/dev/null & sleep 0.5
inA iperf3 -c 198.19.251.2 -p $PORT -t 2 -O 1 -P 2 --json --get-server-output > iperf3_two_streams.json
# iperf3's own errors: nobody listening, and a server busy with another test
inA iperf3 -c 198.19.251.2 -p $PORT -t 1 --json > iperf3_refused.json || true
inB iperf3 -s -1 -p $PORT --json >/dev/null & sleep 0.5
inA iperf3 -c 198.19.251.2 -p $PORT -t 3 --json >/dev/null & sleep 0.7
inA iperf3 -c 198.19.251.2 -p $PORT -t 1 --json > iperf3_busy.json || true
wait
# damaged copies: cut mid-document, and bytes that are not JSON at all
head -c 2000 iperf3_forward.json > iperf3_truncated.json
printf 'iperf3: interrupt - the client has terminated\n\x00\x17{"start": {' > iperf3_garbage.json

# ping: success, loss (B drops every 3rd echo request), unreachable (no such neighbour)
inA ping -c 10 -i 0.2 198.19.251.2 > ping_ok.txt
head -n 6 ping_ok.txt > ping_truncated.txt  # cut before the statistics
inB iptables -A INPUT -p icmp --icmp-type echo-request -m statistic --mode nth --every 3 --packet 0 -j DROP
inA ping -c 12 -i 0.2 198.19.251.2 > ping_loss.txt || true
inB iptables -F INPUT
inB iptables -A INPUT -p icmp -j DROP
inA ping -c 5 -i 0.2 -W 1 198.19.251.2 > ping_all_lost.txt || true
# no neighbour answers ARP (the kernel reports "Destination Host Unreachable"), and no route at all
inA ping -c 8 -i 0.5 198.19.251.9 > ping_unreachable.txt || true
inA ping -c 3 -i 0.2 198.19.252.1 > ping_no_route.txt 2>&1 || true

# a long path: ping prints whole milliseconds from 100 ms on. No netem here, so the
# project's delayd (make setup builds it) holds A's echo requests for 129 +- 3 ms.
inB iptables -F INPUT
echo "198.19.251.1 198.19.251.2 129000 3000 0" > /tmp/irtest-cap-delays.txt
inA iptables -A OUTPUT -d 198.19.251.2 -j NFQUEUE --queue-num 0
inA ../../infra/local/delayd/delayd --table /tmp/irtest-cap-delays.txt --queue-first 0 \
  --queue-count 1 2>/dev/null & DELAYD=$!; sleep 1
inA ping -c 10 -i 0.2 198.19.251.2 > ping_long.txt
inA iptables -F OUTPUT; kill $DELAYD; wait $DELAYD || true
