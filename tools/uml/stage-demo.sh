#!/bin/busybox sh
# Stage run inside UML by `make demo`: load the module and use the CLI.
show() { echo "\$ $*"; "$@"; }
htwheel=$htw_bin/htwheel
show insmod "$htw_mod/htwheel.ko" || exit 1
show ls -l /dev/htwheel
show "$htwheel" --version
show "$htwheel" info
# One process schedules, watches and drains: timers belong to its fd.
show "$htwheel" run --at 100ms:a --at 250ms:b --at 1s:c --at 10s:never \
	--every 200ms:tick --every 450ms:tock --cancel 700ms:tock \
	--for 1200ms --stats || exit 1
show "$htwheel" schedule 50ms 150ms --cookie 100 || exit 1
# The same through the shared timer table: slots armed by writing memory.
show "$htwheel" schedule --table 50ms 150ms --stats || exit 1
show "$htwheel" stats || exit 1
show "$htwheel" run --at 5x || true
show rmmod htwheel || exit 1
