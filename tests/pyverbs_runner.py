#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Run rdma-core's pyverbs test suite (the Debian copy) against softib0.

The installed copy (/usr/share/doc/rdma-core/tests) does not run in place:
most files are gzipped.  This copies it to a temporary directory, unpacks
it, runs the requested modules with a result that prints, per module,
"module: P passed, F failed, E errors, S skipped, D deferred", the reason of
every skip and deferral, and the traceback of every failure and error, and
ends with "pyverbs: N passed, N failed" (failed counts failures and errors).

Tests listed in the deferral file (tests/pyverbs-deferred.txt: a test id such
as test_mr.MWTest.test_mw_type1 or a class id such as test_mr.MWTest, then
the reason) are not run; a deferral naming no existing test is an error.

A test may skip only if the expected-skips file (tests/pyverbs-skips.txt: a
test, class or module id, wildcards allowed, then the feature softib0 does
not advertise) lists it; any other skip counts as a failure, so that a verb
which starts failing with EOPNOTSUPP cannot pass as a skip.

The suite's rdma_cm tests listen on the fixed port 7471; the copy uses a
port that is free on this host instead (--cm-port), so that runs beside
each other, or beside another program on 7471, do not meet.

Run it with /usr/bin/python3 (the interpreter that has pyverbs) under
`softib run`.  Exit status 0 iff no test failed or errored.
"""

import argparse
import fnmatch
import gzip
import multiprocessing
import os
import shutil
import subprocess
import socket
import sys
import tempfile
import traceback
import unittest

ISSUE3_MODULES = ['test_device', 'test_pd', 'test_mr', 'test_cq', 'test_qp', 'test_addr',
                  'test_fork']
SUITE_DIR = '/usr/share/doc/rdma-core/tests'
HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--modules', nargs='+', metavar='MODULE',
                   help='modules to run (default: %s); commas also separate'
                        % ' '.join(ISSUE3_MODULES))
    p.add_argument('--all', action='store_true', help='run every test_* module of the suite')
    p.add_argument('--verbose', '-v', action='store_true',
                   help='print every test as it finishes')
    p.add_argument('--deferred', default=os.path.join(HERE, 'pyverbs-deferred.txt'),
                   help='deferral list (default: %(default)s)')
    p.add_argument('--skips', default=os.path.join(HERE, 'pyverbs-skips.txt'),
                   help='tests allowed to skip (default: %(default)s)')
    p.add_argument('--suite', default=SUITE_DIR, help='pyverbs tests (default: %(default)s)')
    p.add_argument('--dev', default='softib0', help="device to test ('' = the first listed)")
    p.add_argument('--cm-port', type=int, default=0,
                   help="port of the suite's rdma_cm tests instead of 7471 (default: a free one)")
    return p.parse_args()


def unpack_suite(src, dst):
    """Copy the suite to dst/tests and gunzip every .gz file in it."""
    tests = os.path.join(dst, 'tests')
    shutil.copytree(src, tests)
    for name in os.listdir(tests):
        if name.endswith('.gz'):
            path = os.path.join(tests, name)
            with gzip.open(path, 'rb') as zin, open(path[:-3], 'wb') as out:
                shutil.copyfileobj(zin, out)
            os.unlink(path)
    return tests


def free_tcp_port():
    """A TCP port nobody on this host uses now (the kernel's pick for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('', 0))
        return s.getsockname()[1]


def set_cm_port(tests, port):
    """The unpacked suite's rdma_cm tests use port instead of 7471."""
    path = os.path.join(tests, 'base_rdmacm.py')
    if not os.path.exists(path):
        return
    with open(path) as f:
        text = f.read()
    if "'7471'" not in text:
        raise SystemExit("pyverbs runner: %s no longer names port '7471'; see --cm-port" % path)
    with open(path, 'w') as f:
        f.write(text.replace("'7471'", "'%d'" % port))


def read_deferrals(path, must_exist=False):
    """[(id, reason, line number)] from the deferral (or expected-skips) file."""
    out = []
    if not os.path.exists(path):
        if must_exist:
            raise SystemExit('pyverbs runner: %s not found' % path)
        return out
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                raise SystemExit('%s:%d: a deferral needs a test id and a reason' % (path, n))
            out.append((parts[0].removeprefix('tests.'), parts[1].strip(), n))
    return out


def installed_rdma_core():
    """The major version of the installed rdma-core (its suite), or None."""
    try:
        out = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'rdma-core'],
                             capture_output=True, text=True, check=True).stdout
        return int(out.split('.', 1)[0].split(':')[-1])
    except (OSError, subprocess.CalledProcessError, ValueError):
        return None


def newer_only(reason):
    """N when a deferral's reason says "(rdma-core N on)": a test that older
    suites do not have."""
    import re
    m = re.search(r'\(rdma-core (\d+) on\)', reason)
    return int(m.group(1)) if m else None


def id_matches(tid, pattern):
    """True when pattern names tid, its class or its module (wildcards allowed)."""
    return fnmatch.fnmatchcase(tid, pattern) or fnmatch.fnmatchcase(tid, pattern + '.*')


def short_id(test):
    return test.id().removeprefix('tests.')


def module_of(test_id):
    return test_id.split('.', 1)[0]


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


class CountingResult(unittest.TestResult):
    """Counts outcomes per module and keeps every reason and traceback."""

    def __init__(self, verbose, allowed_skips):
        super().__init__()
        self.verbose = verbose
        self.allowed_skips = allowed_skips  # [(pattern, feature, line)]
        self.per = {}      # module -> {'passed', 'failed', 'errors', 'skipped'}
        self.notes = {}    # module -> [text]

    def _bump(self, test, what, note=None):
        tid = short_id(test) if hasattr(test, 'id') else str(test)
        mod = module_of(tid)
        counts = self.per.setdefault(mod, dict(passed=0, failed=0, errors=0, skipped=0))
        counts[what] += 1
        if note:
            self.notes.setdefault(mod, []).append(note)
        if self.verbose:
            print('  %-7s %s' % (what.rstrip('s').upper() if what != 'passed' else 'PASS', tid),
                  flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._bump(test, 'passed')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bump(test, 'failed', 'FAIL %s\n%s' % (short_id(test), self._exc_info_to_string(err, test)))

    def addError(self, test, err):
        super().addError(test, err)
        # setUpClass/setUpModule failures come as _ErrorHolder objects.
        if hasattr(test, '_testMethodName'):
            text = self._exc_info_to_string(err, test)
        else:
            text = ''.join(traceback.format_exception(*err))
        self._bump(test, 'errors', 'ERROR %s\n%s' % (short_id(test), text))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        tid = short_id(test)
        feature = next((f for pat, f, _ in self.allowed_skips if id_matches(tid, pat)), None)
        if feature:
            self._bump(test, 'skipped', 'skip %s: %s [not advertised: %s]' % (tid, reason, feature))
        else:
            self._bump(test, 'failed', 'FAIL %s: unexpected skip (not in the expected-skips '
                       'file): %s' % (tid, reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._bump(test, 'passed')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._bump(test, 'failed', 'FAIL %s: unexpected success' % short_id(test))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = 'failed' if issubclass(err[0], test.failureException) else 'errors'
            self._bump(test, kind, '%s %s\n%s' % (kind.upper(), subtest.id(),
                                                  self._exc_info_to_string(err, test)))


def no_kernel_netdev(dev):
    """Suites from rdma-core 56 on look up a port's netdev with `rdma link
    show` (the kernel's RDMA netlink), which cannot list softib0: it has no
    kernel presence.  When that command fails for softib0, take the suite's
    own fallback, the device's sysfs directory (None without one: an IB
    port); every other device keeps the suite's lookup as it is."""
    import tests.base as base
    cls = getattr(base, 'RDMATestCase', None)
    orig = getattr(cls, 'get_net_name', None) if cls else None
    if orig is None or not dev:
        return

    def get_net_name(*args):
        # (dev) before rdma-core 56, (dev, port=None) from 56 on
        try:
            return orig(*args)
        except (subprocess.CalledProcessError, OSError):
            if len(args) < 2 or args[0] != dev or args[1] is None:
                raise
            return orig(args[0], None)  # the suite's own sysfs lookup
    cls.get_net_name = staticmethod(get_net_name)


def main():
    # The suite hands bound methods of its test cases to
    # multiprocessing.Process (test_device's test_multi_process_alloc_dm):
    # written for fork, Python's default on Linux before 3.14, where
    # forkserver would pickle the test case and this runner's result with it.
    multiprocessing.set_start_method('fork', force=True)
    args = parse_args()
    if not os.path.isdir(args.suite):
        print('pyverbs runner: %s not found (install rdma-core)' % args.suite, file=sys.stderr)
        return 2
    try:
        import pyverbs  # noqa: F401
    except ImportError:
        print('pyverbs runner: %s has no pyverbs; run it with /usr/bin/python3 '
              '(python3-pyverbs)' % sys.executable, file=sys.stderr)
        return 2

    tmp = tempfile.mkdtemp(prefix='softib-pyverbs-')
    try:
        return run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, tmp):
    tests_dir = unpack_suite(args.suite, tmp)
    set_cm_port(tests_dir, args.cm_port or free_tcp_port())
    sys.path[:0] = [tmp, tests_dir]  # the suite imports both tests.x and args_parser

    # The suite reads its options (device, port, GID) from its own parser.
    import args_parser
    sys.argv = [sys.argv[0]] + (['--dev', args.dev] if args.dev else [])
    args_parser.parser.parse_args()
    import tests  # noqa: F401  (loads every module of the suite, as run_tests.py does)
    no_kernel_netdev(args.dev)

    all_modules = sorted(f[:-3] for f in os.listdir(tests_dir)
                         if f.startswith('test_') and f.endswith('.py'))
    if args.all:
        modules = all_modules
    elif args.modules:
        modules = [m for arg in args.modules for m in arg.split(',') if m]
    else:
        modules = list(ISSUE3_MODULES)

    deferrals = read_deferrals(args.deferred)
    allowed_skips = read_deferrals(args.skips, must_exist=True)
    loader = unittest.TestLoader()
    loaded = {}

    def load(mod):
        if mod not in loaded:
            try:
                loaded[mod] = list(flatten(loader.loadTestsFromName('tests.' + mod)))
            except (ImportError, AttributeError) as ex:
                raise SystemExit('pyverbs runner: no module %s in the suite (%s)' % (mod, ex))
        return loaded[mod]

    # Every deferral must name a test (or a class of tests) that exists,
    # unless it says "(rdma-core N on)" and this suite is older than N.
    suite_version = installed_rdma_core()
    for d_id, reason, n in deferrals:
        ids = [short_id(t) for t in load(module_of(d_id))]
        if not any(i == d_id or i.startswith(d_id + '.') for i in ids):
            since = newer_only(reason)
            if since is not None and suite_version is not None and suite_version < since:
                continue
            raise SystemExit('%s:%d: deferral of %s, which is not a test of the suite'
                             % (args.deferred, n, d_id))

    # Every expected skip must name tests of the suite too (with the same
    # "(rdma-core N on)" exception).
    for pat, feature, n in allowed_skips:
        mods = [m for m in all_modules if fnmatch.fnmatchcase(m, module_of(pat))]
        if not any(id_matches(short_id(t), pat) for m in mods for t in load(m)):
            since = newer_only(feature)
            if since is not None and suite_version is not None and suite_version < since:
                continue
            raise SystemExit('%s:%d: expected skip %s names no test of the suite'
                             % (args.skips, n, pat))

    def deferral_of(tid):
        for d_id, reason, _ in deferrals:
            if tid == d_id or tid.startswith(d_id + '.'):
                return reason
        return None

    result = CountingResult(args.verbose, allowed_skips)
    deferred = {}
    for mod in modules:
        suite = unittest.TestSuite()
        for t in load(mod):
            reason = deferral_of(short_id(t))
            if reason:
                deferred.setdefault(mod, []).append((short_id(t), reason))
            else:
                suite.addTest(t)
        if args.verbose:
            print('=== %s' % mod, flush=True)
        suite.run(result)  # a top-level run: it tears its fixtures down itself

    total = dict(passed=0, failed=0, errors=0, skipped=0, deferred=0)
    for mod in modules:
        c = result.per.get(mod, dict(passed=0, failed=0, errors=0, skipped=0))
        d = deferred.get(mod, [])
        print('%s: %d passed, %d failed, %d errors, %d skipped, %d deferred'
              % (mod, c['passed'], c['failed'], c['errors'], c['skipped'], len(d)))
        for note in result.notes.get(mod, []):
            print('  ' + note.rstrip().replace('\n', '\n    '))
        for tid, reason in d:
            print('  deferred %s: %s' % (tid, reason))
        for k in c:
            total[k] += c[k]
        total['deferred'] += len(d)
    # Errors outside any listed module (module-level fixtures) count too.
    for mod, c in result.per.items():
        if mod not in modules:
            print('%s: %d errors outside the listed modules' % (mod, c['errors'] + c['failed']))
            for note in result.notes.get(mod, []):
                print('  ' + note.rstrip().replace('\n', '\n    '))
            total['errors'] += c['errors'] + c['failed']
    bad = total['failed'] + total['errors']
    print('pyverbs total: %d passed, %d failed, %d errors, %d skipped, %d deferred'
          % (total['passed'], total['failed'], total['errors'], total['skipped'],
             total['deferred']))
    print('pyverbs: %d passed, %d failed' % (total['passed'], bad))
    return 0 if bad == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
