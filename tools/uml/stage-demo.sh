#!/bin/busybox sh
# Stage run inside UML by `make demo`: load the module and use the CLI.
show() { echo "\$ $*"; "$@"; }
show insmod "$htw_mod/htwheel.ko" || exit 1
show ls -l /dev/htwheel
show "$htw_bin/htwheel" --version
show "$htw_bin/htwheel" info
show rmmod htwheel || exit 1
