# SPDX-License-Identifier: GPL-2.0
"""Run the cases of a unittest.TestCase as TAP, kselftest style: one
"ok N PREFIX.case" line each, the traceback of a failure as comments.
The harness's own tests print this for results.py (boot "host")."""
import unittest


def run_as_tap(case_class, prefix):
    """Print the TAP of every case of @case_class; return the exit status."""
    tests = list(unittest.defaultTestLoader.loadTestsFromTestCase(case_class))
    print('TAP version 13')
    print(f'1..{len(tests)}')
    failed = 0
    for i, t in enumerate(tests, 1):
        r = unittest.TestResult()
        t.run(r)
        name = f'{prefix}.' + t.id().rsplit('.', 1)[1]
        if r.wasSuccessful():
            print(f'ok {i} {name}')
            continue
        failed += 1
        for _, tb in r.failures + r.errors:
            print('\n'.join('# ' + line for line in tb.splitlines()))
        print(f'not ok {i} {name}')
    return 1 if failed else 0
