//! Summaries of the gaps by cause, resource and PID.

#[allow(unused_imports)]
use super::*;

pub(super) fn by_cause(gaps: &[Gap], blocked: &[Gap]) -> Vec<CauseRow> {
    let mut m: BTreeMap<(GapKind, Cause), Vec<f64>> = BTreeMap::new();
    for g in gaps.iter().chain(blocked) {
        m.entry((g.kind, g.cause)).or_default().push(g.seconds);
    }
    let mut rows: Vec<CauseRow> = m
        .into_iter()
        .map(|((kind, cause), s)| CauseRow {
            cause,
            kind,
            dist: Dist::of(s),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.kind, b.dist.total_seconds)
            .partial_cmp(&(b.kind, a.dist.total_seconds))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cause.cmp(&b.cause))
    });
    rows
}

pub(super) fn by_resource(gaps: &[Gap], blocked: &[Gap]) -> Vec<ResourceRow> {
    let mut m: BTreeMap<(GapKind, String), (ResKind, Vec<f64>)> = BTreeMap::new();
    for g in gaps.iter().chain(blocked) {
        let key = g
            .resource
            .as_deref()
            .map_or_else(|| "(none)".to_string(), normalize_resource);
        let e = m
            .entry((g.kind, key))
            .or_insert_with(|| (g.resource_kind, Vec::new()));
        e.1.push(g.seconds);
    }
    let mut rows: Vec<ResourceRow> = m
        .into_iter()
        .map(|((kind, resource), (rk, s))| ResourceRow {
            resource,
            resource_kind: rk,
            kind,
            dist: Dist::of(s),
        })
        .collect();
    rows.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then(b.dist.total_seconds.total_cmp(&a.dist.total_seconds))
            .then(a.resource.cmp(&b.resource))
    });
    rows
}

pub(super) fn by_pid(gaps: &[Gap], blocked: &[Gap]) -> Vec<PidRow> {
    type PerPid = (Vec<f64>, Vec<f64>, BTreeMap<&'static str, u64>);
    let mut m: BTreeMap<u32, PerPid> = BTreeMap::new();
    for g in gaps {
        let e = m.entry(g.pid).or_default();
        e.0.push(g.seconds);
        *e.2.entry(g.cause.as_str()).or_insert(0) += 1;
    }
    for g in blocked {
        m.entry(g.pid).or_default().1.push(g.seconds);
    }
    let mut rows: Vec<PidRow> = m
        .into_iter()
        .map(|(pid, (g, b, causes))| PidRow {
            pid,
            gaps: Dist::of(g),
            blocked: Dist::of(b),
            causes,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.gaps
            .total_seconds
            .total_cmp(&a.gaps.total_seconds)
            .then(a.pid.cmp(&b.pid))
    });
    rows
}

/// Group TCP/UDP peers regardless of their ephemeral port (≥ 32768 becomes `*`).
pub(super) fn normalize_resource(label: &str) -> String {
    let is_inet = ["TCP", "UDP"].iter().any(|p| label.starts_with(p));
    if !is_inet {
        return label.to_string();
    }
    let mut out = String::with_capacity(label.len());
    let mut rest = label;
    while let Some(i) = rest.find(':') {
        let (head, tail) = rest.split_at(i + 1);
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let after = tail.get(digits..).unwrap_or_default();
        let port: Option<u32> = tail.get(..digits).and_then(|d| d.parse().ok());
        let ends_port = after.starts_with(']') || after.starts_with('-') || after.starts_with(',');
        match port {
            Some(p) if ends_port && p >= 32768 => out.push('*'),
            _ => out.push_str(tail.get(..digits).unwrap_or_default()),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// An authentication file or socket.
pub(super) fn is_auth(label: &str, kind: ResKind) -> bool {
    let base = label.rsplit('/').next().unwrap_or(label);
    let file = base.starts_with("htpasswd")
        || base.ends_with(".htpasswd")
        || base.ends_with(".users")
        || base.starts_with("htdigest")
        || base.ends_with(".htdigest")
        || label == "/etc/shadow"
        || label == "/etc/gshadow"
        || label.starts_with("/etc/pam.d/")
        || (base.starts_with("pam_") && base.ends_with(".so"));
    let socket = label.contains("/sss/pipes")
        || label.contains("ldapi")
        || label.contains("nslcd")
        || label.contains("slapd")
        || (kind == ResKind::Socket
            && [":389]", ":636]", ":389-", ":636-", ":389,", ":636,"]
                .iter()
                .any(|p| label.contains(p)));
    file || socket
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_ephemeral_ports() {
        assert_eq!(
            normalize_resource("TCP:[127.0.0.1:8081->127.0.0.1:52428]"),
            "TCP:[127.0.0.1:8081->127.0.0.1:*]"
        );
        assert_eq!(
            normalize_resource("TCPv6:[[::1]:38139->[::1]:443]"),
            "TCPv6:[[::1]:*->[::1]:443]"
        );
        assert_eq!(normalize_resource("/etc/x:40000]"), "/etc/x:40000]");
    }

    #[test]
    fn auth_labels() {
        for l in [
            "/etc/apache2/htpasswd.users",
            "/srv/.htpasswd",
            "/etc/htdigest",
            "/etc/shadow",
            "/etc/pam.d/common-auth",
            "/lib/x86_64-linux-gnu/security/pam_unix.so",
            "UNIX:[/var/lib/sss/pipes/nss]",
        ] {
            assert!(is_auth(l, ResKind::of_label(l.as_bytes())), "{l}");
        }
        assert!(is_auth(
            "TCP:[10.0.0.1:40000->10.0.0.2:389]",
            ResKind::Socket
        ));
        assert!(!is_auth("/var/www/index.html", ResKind::File));
        assert!(!is_auth(
            "TCP:[10.0.0.1:443->10.0.0.2:50000]",
            ResKind::Socket
        ));
    }
}
