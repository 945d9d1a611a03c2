//! What a system call is: its role, its class, the socket address it names.

#[allow(unused_imports)]
use super::*;

#[derive(Clone, Copy)]
pub(super) enum Role {
    Path(usize),
    DirPath(usize, usize),
    Fds(&'static [usize]),
    None,
}

pub(super) fn role(name: &[u8]) -> Role {
    match name {
        b"open" | b"creat" | b"stat" | b"lstat" | b"stat64" | b"lstat64" | b"access"
        | b"readlink" | b"truncate" | b"unlink" | b"mkdir" | b"rmdir" | b"chdir" | b"chmod"
        | b"chown" | b"lchown" | b"statfs" | b"execve" | b"utime" | b"utimes" | b"mknod"
        | b"getxattr" | b"lgetxattr" | b"setxattr" | b"listxattr" | b"rename" | b"link"
        | b"chroot" | b"uselib" => Role::Path(0),
        b"symlink" => Role::Path(1),
        b"openat" | b"openat2" | b"newfstatat" | b"fstatat64" | b"statx" | b"faccessat"
        | b"faccessat2" | b"readlinkat" | b"unlinkat" | b"mkdirat" | b"fchmodat" | b"fchownat"
        | b"utimensat" | b"execveat" | b"mknodat" | b"renameat" | b"renameat2" | b"linkat"
        | b"inotify_add_watch" | b"name_to_handle_at" => Role::DirPath(0, 1),
        b"mmap" | b"mmap2" => Role::Fds(&[4]),
        b"sendfile" | b"sendfile64" | b"tee" => Role::Fds(&[0, 1]),
        b"splice" | b"copy_file_range" => Role::Fds(&[0, 2]),
        b"epoll_ctl" => Role::Fds(&[2]),
        b"read" | b"write" | b"pread64" | b"pwrite64" | b"readv" | b"writev" | b"preadv"
        | b"pwritev" | b"preadv2" | b"pwritev2" | b"recvfrom" | b"recvmsg" | b"recvmmsg"
        | b"recv" | b"sendto" | b"sendmsg" | b"sendmmsg" | b"send" | b"close" | b"fstat"
        | b"fstat64" | b"fsync" | b"fdatasync" | b"lseek" | b"_llseek" | b"ioctl" | b"fcntl"
        | b"fcntl64" | b"getdents" | b"getdents64" | b"accept" | b"accept4" | b"connect"
        | b"bind" | b"listen" | b"shutdown" | b"setsockopt" | b"getsockopt" | b"getsockname"
        | b"getpeername" | b"flock" | b"ftruncate" | b"fchmod" | b"fchown" | b"fadvise64"
        | b"fallocate" | b"sync_file_range" | b"fstatfs" | b"fchdir" | b"fgetxattr"
        | b"fsetxattr" | b"flistxattr" | b"dup" | b"dup2" | b"dup3" | b"syncfs" | b"readahead"
        | b"epoll_wait" | b"epoll_pwait" | b"epoll_pwait2" => Role::Fds(&[0]),
        _ => Role::None,
    }
}

pub(super) fn call_class(name: &[u8], call_args: &[u8]) -> CallClass {
    match name {
        b"accept" | b"accept4" | b"poll" | b"ppoll" | b"select" | b"_newselect" | b"pselect6"
        | b"epoll_wait" | b"epoll_pwait" | b"epoll_pwait2" | b"nanosleep" | b"clock_nanosleep"
        | b"wait4" | b"waitid" | b"waitpid" | b"futex" | b"futex_waitv" | b"pause"
        | b"rt_sigsuspend" | b"sigsuspend" | b"rt_sigtimedwait" | b"restart_syscall"
        | b"msgrcv" | b"semop" | b"semtimedop" | b"io_getevents" | b"io_pgetevents"
        | b"io_uring_enter" | b"flock" | b"connect" | b"mq_timedreceive" | b"sleep" => {
            CallClass::Wait
        }
        b"fcntl" | b"fcntl64" if contains(call_args, b"SETLKW") => CallClass::Wait,
        b"read" | b"write" | b"pread64" | b"pwrite64" | b"readv" | b"writev" | b"preadv"
        | b"pwritev" | b"preadv2" | b"pwritev2" | b"recvfrom" | b"recvmsg" | b"recvmmsg"
        | b"recv" | b"sendto" | b"sendmsg" | b"sendmmsg" | b"send" | b"sendfile"
        | b"sendfile64" | b"splice" | b"tee" => CallClass::Data,
        b"fsync" | b"fdatasync" | b"sync" | b"syncfs" | b"msync" | b"sync_file_range" | b"open"
        | b"openat" | b"openat2" | b"creat" | b"stat" | b"lstat" | b"fstat" | b"newfstatat"
        | b"statx" | b"access" | b"faccessat" | b"faccessat2" | b"readlink" | b"readlinkat"
        | b"unlink" | b"unlinkat" | b"rename" | b"renameat" | b"renameat2" | b"mkdir"
        | b"mkdirat" | b"rmdir" | b"close" | b"ftruncate" | b"truncate" | b"fallocate"
        | b"getdents" | b"getdents64" | b"statfs" | b"fstatfs" | b"chdir" | b"utimensat"
        | b"link" | b"linkat" | b"symlink" | b"chmod" | b"fchmod" | b"fchmodat" | b"chown"
        | b"fchown" | b"fchownat" | b"copy_file_range" | b"readahead" | b"fadvise64" | b"lseek" => {
            CallClass::Io
        }
        b"execve" | b"execveat" => CallClass::Exec,
        _ => CallClass::Other,
    }
}

/// A label for a `connect` address without `-y`: `UNIX:[/path]`, `TCP:[->1.2.3.4:389]`.
pub(super) fn sockaddr_label(arg: &[u8]) -> Option<Vec<u8>> {
    let body = inner(arg)?;
    let mut path = None;
    let mut port = None;
    let mut addr = None;
    let mut v6 = false;
    for item in args(body) {
        if let Some(v) = item.strip_prefix(b"sun_path=") {
            let v = v.strip_prefix(b"@").unwrap_or(v);
            path = quoted(v).map(|(p, _)| p.into_owned());
        } else if let Some(v) = item
            .strip_prefix(b"sin_port=htons(")
            .or_else(|| item.strip_prefix(b"sin6_port=htons("))
        {
            port = v.strip_suffix(b")").map(<[u8]>::to_vec);
        } else if let Some(v) = item.strip_prefix(b"sin_addr=inet_addr(") {
            addr = v
                .strip_suffix(b")")
                .and_then(quoted)
                .map(|(a, _)| a.into_owned());
        } else if let Some(v) = item.strip_prefix(b"inet_pton(AF_INET6, ") {
            v6 = true;
            addr = quoted(v).map(|(a, _)| a.into_owned());
        } else if item.starts_with(b"sa_family=AF_INET6") {
            v6 = true;
        }
    }
    if let Some(p) = path {
        let mut out = b"UNIX:[".to_vec();
        out.extend_from_slice(&p);
        out.push(b']');
        return Some(out);
    }
    let port = port?;
    let mut out = if v6 {
        b"TCPv6:[->[".to_vec()
    } else {
        b"TCP:[->".to_vec()
    };
    out.extend_from_slice(addr.as_deref().unwrap_or(b"?"));
    if v6 {
        out.push(b']');
    }
    out.push(b':');
    out.extend_from_slice(&port);
    out.push(b']');
    Some(out)
}

pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(p) = hay.get(from..)?.iter().position(|&b| b == first) {
        let at = from + p;
        if hay.get(at + 1..at + needle.len()) == Some(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_labels() {
        assert_eq!(
            sockaddr_label(br#"{sa_family=AF_UNIX, sun_path="/var/lib/sss/pipes/nss"}"#).unwrap(),
            b"UNIX:[/var/lib/sss/pipes/nss]"
        );
        assert_eq!(
            sockaddr_label(
                br#"{sa_family=AF_INET, sin_port=htons(389), sin_addr=inet_addr("10.0.0.2")}"#
            )
            .unwrap(),
            b"TCP:[->10.0.0.2:389]"
        );
    }
}
