# Shared by the step-wise H200 scripts (h200_fp8.sh, h200_profiles.sh); source it after setting bin (the folder
# holding attnbench and attnbench_gpu_tests), out (the output folder) and steps (the steps to run, space
# separated). It creates $out, puts .carry/lib on the library path when it was carried, and defines:
#   ab            the attnbench binary
#   has STEP      whether STEP is one of $steps
#   stamp TEXT    TEXT after the seconds since the script started
#   gpu_tests     the whole GPU suite into $out/gpu-tests.log, its exit code and last result lines printed
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
