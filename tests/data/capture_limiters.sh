#!/usr/bin/env bash
# Re-captures the iperf3 outputs the limiter tests read (run as root, from anywhere): one
# real test per limiter between two throwaway namespaces in 198.19.252.0/24 (irtest-lim-a/-b,
# removed on exit). The project's delayd adds the delay and loss (A -> B only, so the RTT is
# the one-way figure); tc tbf sets the rate; a route's `window` clamps the window.
# tests/unit/results/test_limiter.py states each case's set-up: update it after re-capturing.
# `capture_limiters.sh [case ...]` captures only the cases named (case_* below).
set -euo pipefail
cd "$(dirname "$0")"
[ -x ../../infra/local/delayd/delayd ] || { echo "build delayd first: make delayd" >&2; exit 1; }
A=irtest-lim-a B=irtest-lim-b PORT=15302 IA=198.19.252.1 IB=198.19.252.2
DELAYD=""
TABLE=/tmp/irtest-lim-delays.txt
cleanup() {
  [ -n "$DELAYD" ] && kill "$DELAYD" 2>/dev/null || true
  ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true
  rm -f "$TABLE"
}
trap cleanup EXIT
cleanup
ip netns add "$A"; ip netns add "$B"
ip link add irtlim-a netns "$A" type veth peer name irtlim-b netns "$B"
ip -n "$A" addr add $IA/24 dev irtlim-a; ip -n "$B" addr add $IB/24 dev irtlim-b
ip -n "$A" link set irtlim-a up; ip -n "$B" link set irtlim-b up
ip -n "$A" link set lo up; ip -n "$B" link set lo up
inA() { ip netns exec "$A" "$@"; }
inB() { ip netns exec "$B" "$@"; }

# delay_us loss_ppm: delayd holds A's packets as B receives them (the data direction; on
# A's OUTPUT the held packets would count against the sender's socket and throttle it)
delay() {
  [ -n "$DELAYD" ] && { inB iptables -F INPUT; kill "$DELAYD"; wait "$DELAYD" || true; DELAYD=""; }
  echo "$IA $IB $1 0 $2" > "$TABLE"
  inB iptables -A INPUT -s $IA -j NFQUEUE --queue-num 0
  ip netns exec "$B" ../../infra/local/delayd/delayd --table "$TABLE" --queue-first 0 --queue-count 1 \
    2>/dev/null & DELAYD=$!; sleep 1
}
# name, then iperf3 client options; cubic, a cloud image kernel's congestion control (the
# emulated hosts' too: orchestrator.emulator.net.HOST_CONGESTION_CONTROL)
run() {
  local name=$1; shift
  inB timeout 30 iperf3 -s -1 -p $PORT --json >/dev/null & local server=$!; sleep 0.5
  inA timeout 20 iperf3 -c $IB -p $PORT --json --get-server-output -C cubic "$@" > "iperf3_limiter_$name.json"
  wait "$server"
}

# Each case sets up its own path; `capture_limiters.sh [case ...]` captures only those.
case_window() {
  # 80 ms, B's route back to A carries a window clamp of 64 KiB (the emulator's way,
  # orchestrator.emulator.net); Linux lets twice that be in flight (13.0 Mbit/s = 130 kB / 80 ms)
  delay 80000 0
  ip -n "$B" route replace 198.19.252.0/24 dev irtlim-b proto kernel scope link src $IB window 65536
  run window -t 4 -O 2
  ip -n "$B" route replace 198.19.252.0/24 dev irtlim-b proto kernel scope link src $IB
}
case_loss() {
  # 80 ms, 1 % of A's packets dropped (delayd sees them as B's NIC merged them: one drop
  # can take several segments), no rate cap
  delay 80000 10000
  run loss -t 6 -O 1
}
case_capacity() {
  # 4 streams through a 20 Mbit/s line, 2 ms
  delay 2000 0
  inA tc qdisc replace dev irtlim-a root tbf rate 20mbit burst 32kb latency 100ms
  run capacity -t 4 -O 1 -P 4
  inA tc qdisc del dev irtlim-a root
}
case_allowance() {
  # a burstable host spent: its 6.6 Mbit/s baseline under a 50 Mbit/s line, 2 ms
  delay 2000 0
  inA tc qdisc replace dev irtlim-a root tbf rate 6.6mbit burst 16kb latency 100ms
  run allowance -t 4 -O 1
  inA tc qdisc del dev irtlim-a root
}
case_short_omit() {
  # a ramp inside the measured interval: 250 ms, 1 s omitted, a 2 s test, no clamp (the
  # sender and receiver rates disagree)
  delay 250000 0
  run short_omit -t 2 -O 1
}
case_reverse_long_rtt() {
  # a reverse (-R) capacity test at 200 ms as a sweep runs one on the emulated cloud: B (the
  # server) sends 8 streams through a 50 Mbit/s line to A, both hosts' buffers sized for
  # 2 x BDP (2.5 MB; plan.tuning) and the window clamp lifted to match. The server's clock
  # runs one RTT past the client's, in which it sends next to nothing.
  delay 200000 0
  for ns in "$A" "$B"; do
    ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_rmem="4096 131072 2500000" \
      net.ipv4.tcp_wmem="4096 16384 2500000"
  done
  ip -n "$A" route replace 198.19.252.0/24 dev irtlim-a proto kernel scope link src $IA window 1250000
  ip -n "$B" route replace 198.19.252.0/24 dev irtlim-b proto kernel scope link src $IB window 1250000
  inB tc qdisc replace dev irtlim-b root tbf rate 50mbit burst 32kb latency 30ms
  run reverse_long_rtt -t 5 -O 2 -P 8 -R
  inB tc qdisc del dev irtlim-b root
}
for c in "${@:-window loss capacity allowance short_omit reverse_long_rtt}"; do
  for one in $c; do "case_$one"; done
done
