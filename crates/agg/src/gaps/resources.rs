//! Which files and sockets a call names, and the fd table it changes.

#[allow(unused_imports)]
use super::*;

impl Shared {
    // -------------------------------------------------------------- resources

    /// The files and sockets a call names.
    pub(super) fn call_resources(&mut self, slot: &mut CtxSlot, key: TableKey, c: CallView<'_>) {
        let name = c.name;
        let nth = |n: usize| args(c.args).nth(n);
        match role(name) {
            Role::Path(p) => {
                if let Some(a) = nth(p) {
                    self.path_res(slot, key, None, a);
                }
            }
            Role::DirPath(d, p) => {
                if let Some(a) = nth(p) {
                    self.path_res(slot, key, nth(d), a);
                }
            }
            Role::Fds(list) => {
                for &i in list {
                    if let Some(a) = nth(i) {
                        self.fd_res(slot, key, a);
                    }
                }
            }
            Role::None => {
                if let Some(a) = nth(0) {
                    if fd_arg(a).is_some_and(|(fd, d)| fd >= 0 && d.is_some()) {
                        self.fd_res(slot, key, a);
                    }
                }
            }
        }
        // A new fd: the accepted connection, the socket; opens are named by their path.
        if c.ret.value.is_some_and(|v| v >= 0) && matches!(name, b"accept" | b"accept4" | b"socket")
        {
            let fd = c.ret.value.unwrap_or(-1);
            let label = self.new_fd_label(key, c);
            if let Some(r) = slot.next_res() {
                r.fd = fd;
                r.label.extend_from_slice(&label);
                r.kind = ResKind::Socket;
                slot.commit_res();
            }
            self.label_buf = label;
        }
    }

    pub(super) fn fd_res(&mut self, slot: &mut CtxSlot, key: TableKey, arg: &[u8]) {
        let Some((fd, deco)) = fd_arg(arg) else {
            return;
        };
        if fd < 0 {
            return;
        }
        let Some(r) = slot.next_res() else {
            return;
        };
        r.fd = fd;
        if let Some(d) = deco {
            r.label.extend_from_slice(&decoration_path(d));
            r.kind = ResKind::of_label(&r.label);
        } else {
            match self.tables.lookup(key, fd) {
                Lookup::Known(label, kind) => {
                    r.label.extend_from_slice(label);
                    r.kind = kind;
                }
                Lookup::Closed => return,
                Lookup::Inherited { fd: n, after_exec } => {
                    r.inherited = Some((key, n, after_exec));
                }
            }
        }
        slot.commit_res();
    }

    pub(super) fn path_res(
        &mut self,
        slot: &mut CtxSlot,
        key: TableKey,
        dir: Option<&[u8]>,
        arg: &[u8],
    ) {
        let mut label = std::mem::take(&mut self.label_buf);
        if self.path_label(key, dir, arg, &mut label) {
            if let Some(r) = slot.next_res() {
                r.label.extend_from_slice(&label);
                r.kind = match ResKind::of_label(&label) {
                    ResKind::Unknown => ResKind::File,
                    k => k,
                };
                slot.commit_res();
            }
        }
        self.label_buf = label;
    }

    /// The path a path argument names, joined to its dirfd's directory when relative
    /// and known. False when the argument is not a non-empty string.
    pub(super) fn path_label(
        &self,
        key: TableKey,
        dir: Option<&[u8]>,
        arg: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        let Some((path, _)) = quoted(arg) else {
            return false;
        };
        if path.is_empty() {
            return false;
        }
        if !path.starts_with(b"/") {
            if let Some(dir) = dir.and_then(|d| self.dir_label(key, d)) {
                out.extend_from_slice(&dir);
                if !out.ends_with(b"/") {
                    out.push(b'/');
                }
            }
        }
        out.extend_from_slice(&path);
        true
    }

    /// The directory an `*at` call's dirfd names, if known.
    pub(super) fn dir_label(&self, key: TableKey, arg: &[u8]) -> Option<Vec<u8>> {
        let (fd, deco) = fd_arg(arg)?;
        if let Some(d) = deco {
            return Some(decoration_path(d).into_owned());
        }
        match self.tables.lookup(key, fd) {
            Lookup::Known(l, ResKind::File) => Some(l.to_vec()),
            _ => None,
        }
    }

    /// A label for an fd a call creates, when `-y` does not give one.
    pub(super) fn new_fd_label(&self, key: TableKey, c: CallView<'_>) -> Vec<u8> {
        if let Some(d) = c.ret.decoration {
            return decoration_path(d).into_owned();
        }
        let mut out = Vec::new();
        match c.name {
            b"accept" | b"accept4" => {
                out.extend_from_slice(b"socket:[accepted on ");
                let listen = args(c.args).next().and_then(fd_arg);
                match listen {
                    Some((_, Some(d))) => out.extend_from_slice(&decoration_path(d)),
                    Some((fd, None)) => match self.tables.lookup(key, fd) {
                        Lookup::Known(l, _) => out.extend_from_slice(l),
                        _ => out.extend_from_slice(format!("fd {fd}").as_bytes()),
                    },
                    None => out.extend_from_slice(b"?"),
                }
                out.push(b']');
            }
            b"socket" => {
                let mut a = args(c.args);
                let domain = a.next().unwrap_or(b"?");
                let ty = a.next().unwrap_or(b"?");
                let ty = ty.split(|&b| b == b'|').next().unwrap_or(ty);
                out.extend_from_slice(b"socket:[");
                out.extend_from_slice(domain);
                out.push(b' ');
                out.extend_from_slice(ty);
                out.push(b']');
            }
            b"socketpair" => out.extend_from_slice(b"socketpair:[AF_UNIX]"),
            b"pipe" | b"pipe2" => out.extend_from_slice(b"pipe"),
            b"epoll_create" | b"epoll_create1" => out.extend_from_slice(b"anon_inode:[eventpoll]"),
            b"eventfd" | b"eventfd2" => out.extend_from_slice(b"anon_inode:[eventfd]"),
            b"timerfd_create" => out.extend_from_slice(b"anon_inode:[timerfd]"),
            b"signalfd" | b"signalfd4" => out.extend_from_slice(b"anon_inode:[signalfd]"),
            b"inotify_init" | b"inotify_init1" => out.extend_from_slice(b"anon_inode:inotify"),
            b"pidfd_open" => out.extend_from_slice(b"anon_inode:[pidfd]"),
            b"memfd_create" => {
                out.extend_from_slice(b"memfd:");
                if let Some((n, _)) = args(c.args).next().and_then(quoted) {
                    out.extend_from_slice(&n);
                }
            }
            _ => out.extend_from_slice(b"?"),
        }
        out
    }

    /// Update the fd table for a call.
    pub(super) fn apply(&mut self, scope: u32, tid: u32, key: TableKey, c: CallView<'_>) {
        let ok = c.ret.value.is_some_and(|v| v >= 0);
        let ret = c.ret.value.unwrap_or(-1);
        let nth = |n: usize| args(c.args).nth(n);
        let has = |s: &[u8]| contains(c.args, s);
        match c.name {
            b"open" | b"openat" | b"openat2" | b"creat" if ok => {
                let cloexec = c.name != b"creat" && has(b"O_CLOEXEC");
                if let Some(d) = c.ret.decoration {
                    let l = decoration_path(d);
                    self.tables
                        .open(key, ret, &l, ResKind::of_label(&l), cloexec);
                } else {
                    let (dir, path) = match c.name {
                        b"open" | b"creat" => (None, nth(0)),
                        _ => (nth(0), nth(1)),
                    };
                    let mut label = std::mem::take(&mut self.label_buf);
                    if !path.is_some_and(|p| self.path_label(key, dir, p, &mut label)) {
                        label.clear();
                        label.push(b'?');
                    }
                    self.tables.open(key, ret, &label, ResKind::File, cloexec);
                    self.label_buf = label;
                }
                self.reset_carry(key, ret);
            }
            b"socket" | b"accept" | b"accept4" | b"epoll_create" | b"epoll_create1"
            | b"eventfd" | b"eventfd2" | b"timerfd_create" | b"signalfd" | b"signalfd4"
            | b"inotify_init" | b"inotify_init1" | b"memfd_create" | b"pidfd_open"
                if ok =>
            {
                let label = self.new_fd_label(key, c);
                let kind = match ResKind::of_label(&label) {
                    ResKind::Unknown => ResKind::Other,
                    k => k,
                };
                let cloexec = has(b"CLOEXEC");
                self.tables.open(key, ret, &label, kind, cloexec);
                self.reset_carry(key, ret);
            }
            b"pipe" | b"pipe2" | b"socketpair" if ok => {
                let (arr, flags) = if c.name == b"socketpair" {
                    (nth(3), nth(1))
                } else {
                    (nth(0), nth(1))
                };
                let cloexec = flags.is_some_and(|f| contains(f, b"CLOEXEC"));
                let fallback = self.new_fd_label(key, c);
                if let Some(list) = arr.and_then(inner) {
                    for (fd, deco) in args(list).filter_map(fd_arg) {
                        let label = match deco {
                            Some(d) => decoration_path(d).into_owned(),
                            None => fallback.clone(),
                        };
                        let kind = match ResKind::of_label(&label) {
                            ResKind::Unknown => ResKind::Pipe,
                            k => k,
                        };
                        self.tables.open(key, fd, &label, kind, cloexec);
                        self.reset_carry(key, fd);
                    }
                }
            }
            b"dup" if ok => {
                if let Some((old, _)) = nth(0).and_then(fd_arg) {
                    self.tables.dup(key, old, ret, false);
                    self.dup_carry(key, old, ret);
                }
            }
            b"dup2" | b"dup3" if ok => {
                if let Some((old, _)) = nth(0).and_then(fd_arg) {
                    let cloexec = c.name == b"dup3" && has(b"O_CLOEXEC");
                    self.tables.dup(key, old, ret, cloexec);
                    self.dup_carry(key, old, ret);
                }
            }
            b"fcntl" | b"fcntl64" => {
                let cmd = nth(1).unwrap_or_default();
                let fd = nth(0).and_then(fd_arg).map(|(f, _)| f);
                match (cmd, fd) {
                    (b"F_DUPFD" | b"F_DUPFD_CLOEXEC", Some(old)) if ok => {
                        self.tables.dup(key, old, ret, cmd == b"F_DUPFD_CLOEXEC");
                        self.dup_carry(key, old, ret);
                    }
                    (b"F_SETFD", Some(fd)) if ok => {
                        let on = nth(2).is_some_and(|f| contains(f, b"FD_CLOEXEC"));
                        self.tables.set_cloexec(key, fd, on);
                    }
                    _ => {}
                }
            }
            b"close" => {
                // Linux closes the fd even when close fails with EINTR.
                if ok || c.ret.errno == Some(b"EINTR") {
                    if let Some((fd, _)) = nth(0).and_then(fd_arg) {
                        self.tables.close(key, fd);
                        self.reset_carry(key, fd);
                    }
                }
            }
            b"close_range" if ok => {
                let num = |a: Option<&[u8]>| -> Option<i64> {
                    let a = a?;
                    if a.starts_with(b"~0") {
                        return Some(i64::MAX);
                    }
                    std::str::from_utf8(a).ok()?.trim().parse::<i64>().ok()
                };
                if let (Some(first), Some(last)) = (num(nth(0)), num(nth(1))) {
                    let cloexec_only = has(b"CLOSE_RANGE_CLOEXEC");
                    self.tables.close_range(key, first, last, cloexec_only);
                    if !cloexec_only {
                        self.carries
                            .retain(|&(k, fd, _), _| k != key || fd < first || fd > last);
                    }
                }
            }
            // The next data comes from elsewhere in the file: it continues nothing
            // (`lseek(fd, 0, SEEK_CUR)` only asks where it is).
            b"lseek" | b"_llseek" if ok => {
                let asks = has(b"SEEK_CUR")
                    && args(c.args)
                        .skip(1)
                        .filter(|a| a.first().is_some_and(|b| b.is_ascii_digit() || *b == b'-'))
                        .all(|a| a == b"0");
                if let (false, Some((fd, _))) = (asks, nth(0).and_then(fd_arg)) {
                    self.reset_carry(key, fd);
                }
            }
            b"execve" | b"execveat" if c.ret.value == Some(0) => self.tables.exec(key),
            b"clone" | b"clone3" | b"fork" | b"vfork" if ret > 0 => {
                let child = u32::try_from(ret).unwrap_or(0);
                // `-ff` files are not read in time order: a shared table would mix
                // times, so each thread keeps its own there and inherits a snapshot.
                let share = scope != 0 && has(b"CLONE_FILES");
                self.tables.clone_child(scope, tid, child, share);
                if let Some(i) = self.inputs.iter_mut().rev().find(|i| i.scope == scope) {
                    i.children.insert(child);
                }
            }
            b"connect" if ok || c.ret.errno == Some(b"EINPROGRESS") => {
                if let Some((fd, None)) = nth(0).and_then(fd_arg) {
                    if let Some(label) = nth(1).and_then(sockaddr_label) {
                        self.tables.relabel(key, fd, &label, ResKind::Socket);
                    }
                }
            }
            _ => {
                // Any other call that returns a decorated fd opened it.
                if let (true, Some(d)) = (ok, c.ret.decoration) {
                    let l = decoration_path(d).into_owned();
                    let k = ResKind::of_label(&l);
                    self.tables.open(key, ret, &l, k, has(b"CLOEXEC"));
                    self.reset_carry(key, ret);
                }
            }
        }
    }
}
