//! Per-process fd → resource tables rebuilt from strace calls, for attributing a gap
//! to the file or socket a thread touched last.
//!
//! A table knows what its own process did to each fd (opened it, closed it, dup'ed
//! it). An fd it never touched was inherited: the table says so
//! ([`Lookup::Inherited`]) and the answer is looked up later, at report time, in the
//! snapshot of the parent's table taken at the `clone`/`fork` that created the process
//! ([`FdTables::resolve_inherited`]). That keeps the answer the same whatever order
//! `-ff` files are read in (their tables never take a copy of a parent's: see
//! [`UNORDERED`]), and never guesses: what cannot be known stays unknown.
//!
//! `-y` decorations, when present, name the resource directly and win over the table.
//!
//! ```
//! use tlsgap_agg::fdtable::{FdTables, Lookup, ResKind};
//!
//! let mut t = FdTables::default();
//! let key = t.view(1, 100); // scope 1: the first `-f` file
//! t.open(key, 3, b"/etc/htpasswd", ResKind::File, true);
//! t.clone_child(1, 100, 101, false);
//! let child = t.view(1, 101);
//! assert!(matches!(t.lookup(child, 3), Lookup::Known(b"/etc/htpasswd", ResKind::File)));
//! t.exec(child); // O_CLOEXEC fds go away at a successful execve
//! assert!(matches!(t.lookup(child, 3), Lookup::Closed));
//! ```

use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Serialize;

/// What kind of thing an fd refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResKind {
    /// A regular file or directory (a path).
    File,
    /// A socket (TCP, UDP, UNIX, netlink…).
    Socket,
    /// A pipe or FIFO.
    Pipe,
    /// A terminal.
    Tty,
    /// Anything else: character devices, `anon_inode:` (epoll, eventfd, timerfd), memfd.
    Other,
    /// Not known.
    #[default]
    Unknown,
}

impl ResKind {
    /// The kind a `-y` decoration (or a label built from one) implies.
    pub fn of_label(label: &[u8]) -> ResKind {
        const SOCKETS: [&[u8]; 11] = [
            b"TCP:",
            b"TCPv6:",
            b"UDP:",
            b"UDPv6:",
            b"UNIX",
            b"NETLINK",
            b"socket:",
            b"socketpair:",
            b"RAW",
            b"UDPLITE",
            b"PACKET",
        ];
        if SOCKETS.iter().any(|p| label.starts_with(p)) {
            ResKind::Socket
        } else if label.starts_with(b"pipe:") || label == b"pipe" {
            ResKind::Pipe
        } else if label.starts_with(b"/dev/pts/")
            || label.starts_with(b"/dev/tty")
            || label == b"/dev/console"
        {
            ResKind::Tty
        } else if label.starts_with(b"/dev/") {
            ResKind::Other
        } else if label.starts_with(b"/") {
            ResKind::File
        } else if label.starts_with(b"anon_inode:") || label.starts_with(b"memfd:") {
            ResKind::Other
        } else {
            ResKind::Unknown
        }
    }

    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResKind::File => "file",
            ResKind::Socket => "socket",
            ResKind::Pipe => "pipe",
            ResKind::Tty => "tty",
            ResKind::Other => "other",
            ResKind::Unknown => "unknown",
        }
    }
}

/// Which table a thread uses: (scope, owning tid).
///
/// The scope separates inputs that must not share state (each `-f` file is its own
/// scope; all `-ff` files of a run share one).
pub type TableKey = (u32, u32);

/// The scope of the `-ff` files of a run. They are not in time order between them, so
/// a table there holds only what its own process did: nothing is copied into it from a
/// parent's snapshot, whichever file came first, and every inherited fd is resolved at
/// report time ([`FdTables::resolve_inherited`]). Reading one file then depends on no
/// other, which is what lets `-ff` files be read in any order, or in parallel, with
/// the same answers.
pub const UNORDERED: u32 = 0;

/// Highest fd number tracked (larger numbers are looked up as unknown).
const MAX_FD: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Never touched by this process: whatever was inherited at this number.
    Inherited,
    /// Touched: a dup of what was inherited at another number.
    InheritedFrom(u32),
    Open,
    Closed,
}

#[derive(Clone, Debug)]
struct Slot {
    state: State,
    kind: ResKind,
    cloexec: bool,
    /// Kept when closed so that reopening the number reuses the allocation.
    label: Vec<u8>,
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            state: State::Inherited,
            kind: ResKind::Unknown,
            cloexec: false,
            label: Vec::new(),
        }
    }
}

/// One process's fd table.
#[derive(Clone, Debug)]
struct Table {
    slots: Vec<Slot>,
    /// An `execve` succeeded since the process was created: inherited `O_CLOEXEC` fds
    /// are gone.
    exec_seen: bool,
    /// `close_range` closed every untouched fd from this number on.
    inherited_closed_from: u32,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            slots: Vec::new(),
            exec_seen: false,
            inherited_closed_from: u32::MAX,
        }
    }
}

impl Table {
    fn slot_mut(&mut self, fd: i64) -> Option<&mut Slot> {
        let i = usize::try_from(fd).ok().filter(|&i| i < MAX_FD)?;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, Slot::default);
        }
        self.slots.get_mut(i)
    }

    fn slot(&self, fd: i64) -> Option<&Slot> {
        usize::try_from(fd).ok().and_then(|i| self.slots.get(i))
    }

    /// The state of `fd`, with `close_range` applied to untouched numbers.
    fn state(&self, fd: i64) -> State {
        let s = self.slot(fd).map_or(State::Inherited, |s| s.state);
        let closed = u32::try_from(fd).map_or(true, |n| n >= self.inherited_closed_from);
        if s == State::Inherited && closed {
            State::Closed
        } else {
            s
        }
    }
}

/// The parent's table at the moment a child was created.
#[derive(Clone, Debug)]
struct Inherit {
    parent: TableKey,
    /// Shared between the children of a parent whose table did not change between
    /// forks (a prefork server), copied when the parent changes it.
    table: Arc<Table>,
}

/// What a table says about an fd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// Opened by this process: its label and kind.
    Known(&'a [u8], ResKind),
    /// Closed by this process (or dropped at `execve`).
    Closed,
    /// Inherited (at fd number `fd`, which differs from the one asked for after a
    /// `dup` of an inherited fd); resolve with [`FdTables::resolve_inherited`].
    Inherited {
        /// The fd number in the parent.
        fd: u32,
        /// An `execve` happened in between, so `O_CLOEXEC` fds do not count.
        after_exec: bool,
    },
}

/// All fd tables of a run.
#[derive(Clone, Debug, Default)]
pub struct FdTables {
    tables: FxHashMap<TableKey, Arc<Table>>,
    /// Threads that share another thread's table (`CLONE_FILES` within one `-f` file).
    owner: FxHashMap<TableKey, TableKey>,
    inherit: FxHashMap<TableKey, Inherit>,
}

impl FdTables {
    /// The table thread `tid` uses in `scope`, created (from its inheritance, when
    /// known) on first use.
    pub fn view(&mut self, scope: u32, tid: u32) -> TableKey {
        let key = (scope, tid);
        let key = self.owner.get(&key).copied().unwrap_or(key);
        if !self.tables.contains_key(&key) {
            let table = match self.inherit.get(&key) {
                Some(inh) if scope != UNORDERED => inherited_copy(&inh.table),
                _ => Table::default(),
            };
            self.tables.insert(key, Arc::new(table));
        }
        key
    }

    /// What table `key` says about `fd`.
    pub fn lookup(&self, key: TableKey, fd: i64) -> Lookup<'_> {
        let Some(table) = self.tables.get(&key) else {
            return Lookup::Inherited {
                fd: u32::try_from(fd).unwrap_or(u32::MAX),
                after_exec: false,
            };
        };
        let inherited = |n: u32| Lookup::Inherited {
            fd: n,
            after_exec: table.exec_seen,
        };
        match (table.state(fd), table.slot(fd)) {
            (State::Open, Some(s)) => Lookup::Known(&s.label, s.kind),
            (State::Closed, _) => Lookup::Closed,
            (State::InheritedFrom(n), _) => inherited(n),
            _ => inherited(u32::try_from(fd).unwrap_or(u32::MAX)),
        }
    }

    /// Record that `fd` now refers to `label`.
    pub fn open(&mut self, key: TableKey, fd: i64, label: &[u8], kind: ResKind, cloexec: bool) {
        if let Some(s) = self
            .tables
            .get_mut(&key)
            .and_then(|t| Arc::make_mut(t).slot_mut(fd))
        {
            s.state = State::Open;
            s.kind = kind;
            s.cloexec = cloexec;
            s.label.clear();
            s.label.extend_from_slice(label);
        }
    }

    /// Give an open fd a better label (a `connect` names the peer of a `socket()`).
    pub fn relabel(&mut self, key: TableKey, fd: i64, label: &[u8], kind: ResKind) {
        if let Some(s) = self
            .tables
            .get_mut(&key)
            .and_then(|t| Arc::make_mut(t).slot_mut(fd))
        {
            if s.state == State::Open {
                s.kind = kind;
                s.label.clear();
                s.label.extend_from_slice(label);
            }
        }
    }

    /// Record a `close`.
    pub fn close(&mut self, key: TableKey, fd: i64) {
        if let Some(s) = self
            .tables
            .get_mut(&key)
            .and_then(|t| Arc::make_mut(t).slot_mut(fd))
        {
            s.state = State::Closed;
        }
    }

    /// Set or clear `FD_CLOEXEC` (`fcntl F_SETFD`).
    pub fn set_cloexec(&mut self, key: TableKey, fd: i64, on: bool) {
        if let Some(s) = self
            .tables
            .get_mut(&key)
            .and_then(|t| Arc::make_mut(t).slot_mut(fd))
        {
            s.cloexec = on;
        }
    }

    /// Record `new = dup(old)` (also `dup2`, `dup3`, `fcntl F_DUPFD*`).
    pub fn dup(&mut self, key: TableKey, old: i64, new: i64, cloexec: bool) {
        if old == new {
            return;
        }
        let Some(table) = self.tables.get_mut(&key).map(Arc::make_mut) else {
            return;
        };
        let src = table.slot(old).map(|s| (s.state, s.kind, s.label.clone()));
        let old_n = u32::try_from(old).unwrap_or(u32::MAX);
        let Some(dst) = table.slot_mut(new) else {
            return;
        };
        dst.cloexec = cloexec;
        match src {
            Some((State::Open, kind, label)) => {
                dst.state = State::Open;
                dst.kind = kind;
                dst.label = label;
            }
            Some((State::Closed, ..)) => dst.state = State::Closed,
            Some((State::InheritedFrom(n), ..)) => dst.state = State::InheritedFrom(n),
            Some((State::Inherited, ..)) | None => dst.state = State::InheritedFrom(old_n),
        }
    }

    /// Record `close_range(first, last)` (with `CLOSE_RANGE_CLOEXEC`: `cloexec_only`).
    pub fn close_range(&mut self, key: TableKey, first: i64, last: i64, cloexec_only: bool) {
        let Some(table) = self.tables.get_mut(&key).map(Arc::make_mut) else {
            return;
        };
        let first = first.max(0);
        if first > last {
            return;
        }
        let len = i64::try_from(table.slots.len()).unwrap_or(0);
        for fd in first..=last.min(len - 1) {
            if let Some(s) = table.slot_mut(fd) {
                if cloexec_only {
                    s.cloexec = true;
                } else {
                    s.state = State::Closed;
                }
            }
        }
        // Numbers past the end of the table were never touched: inherited ones are
        // closed too (with CLOEXEC they stay, and an exec will not see them: rare
        // enough to leave inherited).
        if !cloexec_only && last >= len {
            let from = u32::try_from(first.max(len)).unwrap_or(u32::MAX);
            table.inherited_closed_from = table.inherited_closed_from.min(from);
        }
    }

    /// A successful `execve`: `O_CLOEXEC` fds are closed.
    pub fn exec(&mut self, key: TableKey) {
        if let Some(t) = self.tables.get_mut(&key).map(Arc::make_mut) {
            t.exec_seen = true;
            for s in &mut t.slots {
                if s.cloexec && s.state != State::Closed {
                    s.state = State::Closed;
                }
            }
        }
    }

    /// `parent` created `child` (`clone`, `fork`, `vfork`, `clone3`). With
    /// `share_files` (`CLONE_FILES`) and both in one time-ordered file (`-f`), they use
    /// one table from now on. Otherwise the child starts from a copy of the parent's
    /// table as it is now. Either way the snapshot is kept for
    /// [`FdTables::resolve_inherited`].
    pub fn clone_child(&mut self, scope: u32, parent: u32, child: u32, share_files: bool) {
        let pkey = self.view(scope, parent);
        let ckey = (scope, child);
        if pkey == ckey {
            return;
        }
        let snapshot = self.tables.get(&pkey).cloned().unwrap_or_default();
        // Dropping the parent's cached copy would be wrong: `snapshot` shares it, and
        // the parent's next change copies it (`Arc::make_mut`).
        if share_files && !self.owner.contains_key(&ckey) {
            // The child may have printed lines before the parent's `clone` returned:
            // what it did since is newer than the parent's state, so it wins.
            if let Some(own) = self.tables.remove(&ckey) {
                if let Some(ptable) = self.tables.get_mut(&pkey).map(Arc::make_mut) {
                    let own = Arc::unwrap_or_clone(own);
                    for (fd, s) in own.slots.into_iter().enumerate() {
                        if matches!(s.state, State::Open | State::Closed) {
                            if let Some(d) = ptable.slot_mut(fd as i64) {
                                *d = s;
                            }
                        }
                    }
                }
            }
            self.owner.insert(ckey, pkey);
        } else if scope != UNORDERED && !self.owner.contains_key(&ckey) {
            match self.tables.get_mut(&ckey).map(Arc::make_mut) {
                // Same: the child's own changes stay, the rest comes from the parent.
                Some(own) => {
                    let exec_seen = own.exec_seen;
                    for (fd, s) in snapshot.slots.iter().enumerate() {
                        if let Some(d) = own.slot_mut(fd as i64) {
                            if d.state == State::Inherited {
                                *d = s.clone();
                                if exec_seen && d.cloexec {
                                    d.state = State::Closed;
                                }
                            }
                        }
                    }
                }
                None => {
                    self.tables
                        .insert(ckey, Arc::new(inherited_copy(&snapshot)));
                }
            }
        }
        self.inherit.entry(ckey).or_insert(Inherit {
            parent: pkey,
            table: snapshot,
        });
    }

    /// An input is done with: drop the tables of `scope` (for [`UNORDERED`], those of
    /// the `-ff` file just read; the next file's threads are other threads). What
    /// children inherited stays in their snapshots, for report time.
    pub fn end_scope(&mut self, scope: u32) {
        self.tables.retain(|k, _| k.0 != scope);
        self.owner.retain(|k, _| k.0 != scope);
    }

    /// Take in the snapshots of `later`, the tables of inputs read after this one's
    /// (each input's scope ended: only snapshots are left), with every scope but
    /// [`UNORDERED`] moved up by `scope_offset` so that it names no scope of this one.
    /// Where both hold one for the same child, this one's stays: it came first.
    pub fn absorb(&mut self, later: FdTables, scope_offset: u32) {
        let up = |(s, t): TableKey| -> TableKey {
            if s == UNORDERED {
                (s, t)
            } else {
                (s.saturating_add(scope_offset), t)
            }
        };
        for (k, mut inh) in later.inherit {
            inh.parent = up(inh.parent);
            self.inherit.entry(up(k)).or_insert(inh);
        }
        for (k, t) in later.tables {
            self.tables.entry(up(k)).or_insert(t);
        }
        for (k, o) in later.owner {
            self.owner.entry(up(k)).or_insert(up(o));
        }
    }

    /// Thread `tid` is gone: drop its table unless other threads share it. What its
    /// children inherited stays in their snapshots.
    pub fn exit(&mut self, scope: u32, tid: u32) {
        let key = (scope, tid);
        if self.owner.remove(&key).is_some() {
            return;
        }
        if !self.owner.values().any(|o| *o == key) {
            self.tables.remove(&key);
        }
    }

    /// Move everything known under thread `from` to thread `to` (a thread first seen
    /// without a PID whose PID became known later).
    pub fn rename(&mut self, scope: u32, from: u32, to: u32) {
        let (f, t) = ((scope, from), (scope, to));
        if let Some(table) = self.tables.remove(&f) {
            self.tables.entry(t).or_insert(table);
        }
        if let Some(inh) = self.inherit.remove(&f) {
            self.inherit.entry(t).or_insert(inh);
        }
        if let Some(o) = self.owner.remove(&f) {
            self.owner.entry(t).or_insert(o);
        }
        for o in self.owner.values_mut() {
            if *o == f {
                *o = t;
            }
        }
        for inh in self.inherit.values_mut() {
            if inh.parent == f {
                inh.parent = t;
            }
        }
    }

    /// Whether thread `tid` of `scope` is known to have been created by a traced parent.
    pub fn has_parent(&self, scope: u32, tid: u32) -> bool {
        self.inherit.contains_key(&(scope, tid))
    }

    /// What `fd`, inherited by the process of table `key`, referred to: followed through
    /// the snapshots up the process tree.
    pub fn resolve_inherited(&self, key: TableKey, fd: u32, after_exec: bool) -> Resolved<'_> {
        let mut key = key;
        let mut fd = i64::from(fd);
        let mut after_exec = after_exec;
        // Bounded: a malformed trace could make the chain loop.
        for _ in 0..64 {
            let Some(inh) = self.inherit.get(&key) else {
                return Resolved::Unknown;
            };
            match inh.table.state(fd) {
                State::Open => {
                    let Some(s) = inh.table.slot(fd) else {
                        return Resolved::Unknown;
                    };
                    if after_exec && s.cloexec {
                        return Resolved::Closed;
                    }
                    return Resolved::Known(&s.label, s.kind);
                }
                State::Closed => return Resolved::Closed,
                State::InheritedFrom(n) => fd = i64::from(n),
                State::Inherited => {}
            }
            after_exec |= inh.table.exec_seen;
            key = inh.parent;
        }
        Resolved::Unknown
    }
}

/// What an inherited fd turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved<'a> {
    /// Opened by a traced ancestor: its label and kind.
    Known(&'a [u8], ResKind),
    /// Not open in the process (closed by an ancestor, or `O_CLOEXEC` across `execve`).
    Closed,
    /// No traced ancestor says.
    Unknown,
}

/// A child's starting table: the parent's open and closed fds, exec state reset.
fn inherited_copy(parent: &Table) -> Table {
    Table {
        slots: parent.slots.clone(),
        exec_seen: false,
        inherited_closed_from: parent.inherited_closed_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(ResKind::of_label(b"TCP:[1:2->3:4]"), ResKind::Socket);
        assert_eq!(ResKind::of_label(b"pipe:[22395]"), ResKind::Pipe);
        assert_eq!(ResKind::of_label(b"/dev/pts/0"), ResKind::Tty);
        assert_eq!(ResKind::of_label(b"/dev/null"), ResKind::Other);
        assert_eq!(ResKind::of_label(b"/etc/x"), ResKind::File);
        assert_eq!(ResKind::of_label(b"anon_inode:[eventpoll]"), ResKind::Other);
        assert_eq!(ResKind::of_label(b"fd 3"), ResKind::Unknown);
    }

    #[test]
    fn dup_close_exec_and_inheritance() {
        // Scope 1: one time-ordered `-f` file, where a child starts from a copy.
        let mut t = FdTables::default();
        let p = t.view(1, 10);
        t.open(p, 3, b"/a", ResKind::File, false);
        t.open(p, 4, b"/b", ResKind::File, true);
        t.dup(p, 3, 7, false);
        assert_eq!(t.lookup(p, 7), Lookup::Known(b"/a", ResKind::File));
        t.close(p, 3);
        assert_eq!(t.lookup(p, 3), Lookup::Closed);
        assert_eq!(t.lookup(p, 7), Lookup::Known(b"/a", ResKind::File));
        // dup of an inherited fd stays inherited, under the old number.
        t.dup(p, 0, 9, false);
        assert_eq!(
            t.lookup(p, 9),
            Lookup::Inherited {
                fd: 0,
                after_exec: false
            }
        );
        t.clone_child(1, 10, 11, false);
        let c = t.view(1, 11);
        t.exec(c);
        assert_eq!(t.lookup(c, 4), Lookup::Closed, "O_CLOEXEC dropped");
        assert_eq!(t.lookup(c, 7), Lookup::Known(b"/a", ResKind::File));
        // The parent is not affected by the child's exec.
        assert_eq!(t.lookup(p, 4), Lookup::Known(b"/b", ResKind::File));
        // `-ff` files: the child's table takes no copy; the same answers come from
        // the snapshot, at report time.
        let p = t.view(UNORDERED, 10);
        t.open(p, 3, b"/a", ResKind::File, false);
        t.open(p, 4, b"/b", ResKind::File, true);
        t.clone_child(UNORDERED, 10, 11, false);
        let c = t.view(UNORDERED, 11);
        t.exec(c);
        fn resolved(t: &FdTables, c: TableKey, fd: i64) -> Resolved<'_> {
            match t.lookup(c, fd) {
                Lookup::Inherited { fd, after_exec } => t.resolve_inherited(c, fd, after_exec),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(resolved(&t, c, 4), Resolved::Closed, "O_CLOEXEC dropped");
        assert_eq!(resolved(&t, c, 3), Resolved::Known(b"/a", ResKind::File));
    }

    #[test]
    fn child_seen_before_parent_resolves_later() {
        let mut t = FdTables::default();
        // The child's file is read first: fd 5 is unknown to it.
        let c = t.view(0, 21);
        let Lookup::Inherited { fd, after_exec } = t.lookup(c, 5) else {
            panic!("expected inherited")
        };
        assert_eq!(t.resolve_inherited(c, fd, after_exec), Resolved::Unknown);
        // Then the parent's file: it opened fd 5 and forked.
        let p = t.view(0, 20);
        t.open(p, 5, b"/etc/htpasswd", ResKind::File, false);
        t.clone_child(0, 20, 21, false);
        t.close(p, 5);
        assert_eq!(
            t.resolve_inherited(c, fd, after_exec),
            Resolved::Known(b"/etc/htpasswd", ResKind::File)
        );
        // After an exec in the child, an O_CLOEXEC fd of the parent is gone.
        let p = t.view(0, 20);
        t.open(p, 6, b"/log", ResKind::File, true);
        t.clone_child(0, 20, 22, false);
        assert_eq!(t.resolve_inherited((0, 22), 6, true), Resolved::Closed);
        assert_eq!(
            t.resolve_inherited((0, 22), 6, false),
            Resolved::Known(b"/log", ResKind::File)
        );
    }

    #[test]
    fn clone_files_shares_the_table() {
        let mut t = FdTables::default();
        let p = t.view(1, 30);
        t.clone_child(1, 30, 31, true);
        let c = t.view(1, 31);
        assert_eq!(c, p);
        t.open(c, 8, b"/x", ResKind::File, false);
        assert_eq!(t.lookup(p, 8), Lookup::Known(b"/x", ResKind::File));
        // Without CLONE_FILES the child's opens stay its own.
        t.clone_child(1, 30, 32, false);
        let d = t.view(1, 32);
        t.open(d, 9, b"/y", ResKind::File, false);
        assert!(matches!(t.lookup(p, 9), Lookup::Inherited { .. }));
        assert_eq!(t.lookup(d, 8), Lookup::Known(b"/x", ResKind::File));
    }
}
