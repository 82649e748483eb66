#!/usr/bin/env bash
# rdma-core's pyverbs suite against softib0: the issue-3 modules must finish
# with 0 failures and 0 errors (deferrals: tests/pyverbs-deferred.txt).
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}

if [ ! -d /usr/share/doc/rdma-core/tests ]; then
  echo "skip: /usr/share/doc/rdma-core/tests is missing (apt-get install rdma-core)"; exit 77
fi
if ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
  echo "skip: /usr/bin/python3 has no pyverbs (apt-get install python3-pyverbs)"; exit 77
fi
if [ ! -e "$B/libsoftib.so" ]; then
  echo "skip: $B/libsoftib.so is not built"; exit 77
fi
if ! "$SOFTIB" run -- true 2>/dev/null; then
  echo "skip: '$SOFTIB run' does not work in this build"; exit 77
fi
exec "$SOFTIB" run -- /usr/bin/python3 "$top/tests/pyverbs_runner.py" "$@"
