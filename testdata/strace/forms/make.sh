#!/usr/bin/env bash
# Regenerate the real strace fixtures in this directory (run as root, strace 6.1 on
# Debian 12 made the checked-in files). Every fixture is real strace output, only
# renamed; HAND-WRITTEN.strace is not made here (see README.md).
#
#   testdata/strace/forms/make.sh
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# No terminal or job files leak into the traces.
exec 3>&2 </dev/null >/dev/null 2>/dev/null
trap 'echo "make.sh: failed at line $LINENO" >&3' ERR

py=(/usr/bin/python3 -I -S "$here/workload.py")
# The interpreter's start-up (imports) is most of a trace; leave out its noisiest
# calls so that the fixtures stay small (the big two are about 100 KB).
quiet='trace=!rt_sigaction,newfstatat,mmap,mprotect,munmap,brk,lseek,ioctl,getdents64,pread64'
small=(/bin/sh -c 'echo hi | cat >/dev/null; printf "\001\377a\"b\\\\ ) = 1\n" >/dev/null')

# Full workload: bare PIDs, -yy decorations, unfinished/resumed, signals, all exits.
strace -f -tt -T -yy -e "$quiet" -o "$here/f-tt-T-yy.strace" "${py[@]}"
# Full workload to stderr: [pid N] prefixes, attach messages (some glued mid-line).
strace -f -ttt -T -y -e "$quiet,openat,close,fcntl,futex" "${py[@]}" 2>"$here/f-stderr-ttt-T-y.strace"

# Small workload, one flag set each.
strace -f -e "$quiet" -o "$here/f.strace" "${small[@]}"
strace -f -e "$quiet" -t -o "$here/f-t.strace" "${small[@]}"
strace -f -e "$quiet" --absolute-timestamps=format:unix,precision:ns -o "$here/f-unix-ns.strace" "${small[@]}"
strace -f -e "$quiet" --absolute-timestamps=format:time,precision:ms -o "$here/f-ms.strace" "${small[@]}"
strace -f -e "$quiet" --absolute-timestamps=format:unix,precision:s -o "$here/f-unix-s.strace" "${small[@]}"
strace -f -e "$quiet" -r -o "$here/f-r.strace" "${small[@]}"
strace -f -e "$quiet" -tt -r -o "$here/f-tt-r.strace" "${small[@]}"
strace -f -e "$quiet" -r "${small[@]}" 2>"$here/f-stderr-r.strace"
strace -f -e "$quiet" -Y -n -i -tt -T -yy -o "$here/f-Y-n-i-tt-T-yy.strace" "${small[@]}"
strace -f -e "$quiet" -Y -tt "${small[@]}" 2>"$here/f-stderr-Y-tt.strace"
strace -f -e "$quiet" -x -s 64 -o "$here/f-x.strace" "${small[@]}"
strace -f -e "$quiet" -xx -o "$here/f-xx.strace" "${small[@]}"
strace -f -e "$quiet" -s 4096 -tt -T -o "$here/f-s4096.strace" /bin/sh -c 'head -c 6000 /etc/services >/dev/null'
strace -f -k -e trace=write,execve -o "$here/f-k.strace" /bin/sh -c 'echo x >/dev/null'
strace -f -e read=all -e write=all -e trace=read,write -o "$here/f-read-write-dump.strace" "${small[@]}"
strace -f -c -o "$here/f-c.strace" "${small[@]}"
strace -f -C -w -o "$here/f-C.strace" "${small[@]}"

# -ff: one file per process, no prefix; PIDs in the names are renumbered 1, 2, ...
strace -ff -e "$quiet" -ttt -T -o ff "${small[@]}"
mkdir -p "$here/ff"
rm -f "$here"/ff/trace.*
n=0
for f in $(ls ff.* | sort -t. -k2 -n); do
    n=$((n + 1))
    cp "$f" "$here/ff/trace.$n"
done

# -p attach to a sleeping process: restart_syscall(<... resuming interrupted ...>).
sleep 0.6 &
sleeper=$!
sleep 0.2
strace -tt -T -p "$sleeper" 2>"$here/p-attach.strace"
wait "$sleeper" || true
