# Shared by the step-wise H200 scripts (h200_fp8.sh, h200_profiles.sh):
#   . "$(dirname "$0")/h200_common.sh" BIN_DIR DEFAULT_OUT DEFAULT_STEPS
# moves to the repository root and sets bin (BIN_DIR: it holds attnbench and attnbench_gpu_tests), out ($OUT,
# else DEFAULT_OUT) and steps ($STEPS, else DEFAULT_STEPS: the steps to run, space separated). It creates $out,
# puts .carry/lib on the library path when it was carried, records nvidia-smi (with clocks), `attnbench env`
# and `attnbench list` there, and defines:
#   ab            the attnbench binary
#   has STEP      whether STEP is one of $steps
#   stamp TEXT    TEXT after the seconds since the script started
#   gpu_tests     the whole GPU suite into $out/gpu-tests.log, its exit code and last result lines printed
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$1"
out="${OUT:-$2}"
steps="${STEPS:-$3}"
mkdir -p "$out"
[ -d .carry/lib ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ab="$bin/attnbench"
has() { [[ " $steps " == *" $1 "* ]]; }
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
gpu_tests() {
  stamp "gpu tests"
  "$bin/attnbench_gpu_tests" > "$out/gpu-tests.log" 2>&1
  echo "gpu tests exit $?" | tee -a "$out/gpu-tests.log"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$out/gpu-tests.log" | tail -12
}
{ nvidia-smi; nvidia-smi -q -d CLOCK | head -40; } > "$out/nvidia-smi.txt" 2>&1
"$ab" env > "$out/env.txt" 2>&1
"$ab" list > "$out/list.txt" 2>&1
