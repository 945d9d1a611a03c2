//! Key-exchange groups in `tls`: the negotiated groups (nginx `$ssl_curve`) and which
//! share was post-quantum, and the requests and clients that offered a post-quantum
//! group (`$ssl_curves`, `SSL_CLIENTHELLO_GROUPS`). Only reported when the log format
//! has those fields.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tlsgap_ciphers::groups::{self, Group};
use tlsgap_ciphers::offer::Offer;
use tlsgap_parser::lossless_text;

use crate::tally::Tally;

/// How many distinct offered-group lists a partial remembers the verdict of.
const CACHE_LIMIT: usize = 4096;

/// A mergeable count of negotiated and offered groups.
#[derive(Clone, Debug, Default)]
pub struct GroupsAgg {
    negotiated: FxHashMap<Box<[u8]>, u64>,
    offered: u64,
    offered_pq: u64,
    clients: FxHashSet<Box<[u8]>>,
    pq_clients: FxHashSet<Box<[u8]>>,
    cache: FxHashMap<Box<[u8]>, bool>,
}

fn present(v: Option<&[u8]>) -> Option<&[u8]> {
    v.filter(|v| !v.is_empty() && *v != b"-")
}

impl GroupsAgg {
    /// Count the group a request negotiated (`-`/absent: none, not counted).
    pub fn add_negotiated(&mut self, group: Option<&[u8]>) {
        if let Some(g) = present(group) {
            match self.negotiated.get_mut(g) {
                Some(n) => *n += 1,
                None => {
                    self.negotiated.insert(g.into(), 1);
                }
            }
        }
    }

    /// Count the groups a request offered (`-`/absent: not logged, not counted), for
    /// the client `client`.
    pub fn add_offered(&mut self, client: &[u8], offered: Option<&[u8]>) {
        let Some(list) = present(offered) else {
            return;
        };
        let pq = match self.cache.get(list) {
            Some(pq) => *pq,
            None => {
                let text = lossless_text(list);
                let pq =
                    Offer::parse(None, Some(&text), None, None).offers_group(Group::post_quantum);
                if self.cache.len() < CACHE_LIMIT {
                    self.cache.insert(list.into(), pq);
                }
                pq
            }
        };
        self.offered += 1;
        if !self.clients.contains(client) {
            self.clients.insert(client.into());
        }
        if pq {
            self.offered_pq += 1;
            if !self.pq_clients.contains(client) {
                self.pq_clients.insert(client.into());
            }
        }
    }

    /// Add another part of the input (any order).
    pub fn merge(&mut self, other: GroupsAgg) {
        for (g, n) in other.negotiated {
            *self.negotiated.entry(g).or_insert(0) += n;
        }
        self.offered += other.offered;
        self.offered_pq += other.offered_pq;
        self.clients.extend(other.clients);
        self.pq_clients.extend(other.pq_clients);
    }

    /// The report: `negotiated` when the format logs the negotiated group, `offered`
    /// when it logs the offered ones; `client_key` is what one client is.
    pub fn report(&self, negotiated: bool, offered: bool, client_key: &'static str) -> PqReport {
        let tally = Tally::of;
        let negotiated = negotiated.then(|| {
            // Names as OpenSSL writes them, whatever the case or a hex code logged.
            let mut by_name: FxHashMap<String, (u64, bool)> = FxHashMap::default();
            for (g, &n) in &self.negotiated {
                let text = lossless_text(g);
                let known = groups::by_name(text.trim());
                let name = known.map_or_else(|| text.trim().to_string(), |k| k.name.to_string());
                let e = by_name
                    .entry(name)
                    .or_insert((0, known.is_some_and(Group::post_quantum)));
                e.0 += n;
            }
            let requests: u64 = by_name.values().map(|(n, _)| n).sum();
            let mut groups: Vec<GroupRow> = by_name
                .into_iter()
                .map(|(group, (count, pq))| GroupRow {
                    share: tally(count, requests).share,
                    group,
                    count,
                    post_quantum: pq,
                })
                .collect();
            groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.group.cmp(&b.group)));
            let pq = groups
                .iter()
                .filter(|g| g.post_quantum)
                .map(|g| g.count)
                .sum();
            NegotiatedGroups {
                requests,
                post_quantum: tally(pq, requests),
                groups,
            }
        });
        let offered = offered.then(|| OfferedGroups {
            requests: self.offered,
            post_quantum: tally(self.offered_pq, self.offered),
            clients: self.clients.len() as u64,
            post_quantum_clients: tally(self.pq_clients.len() as u64, self.clients.len() as u64),
            client_key,
        });
        PqReport {
            negotiated,
            offered,
        }
    }
}

/// `post_quantum` in `tls --format json` (present only when the format logs groups).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PqReport {
    /// The negotiated groups (`$ssl_curve`), when logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub negotiated: Option<NegotiatedGroups>,
    /// The offered groups (`$ssl_curves`, `SSL_CLIENTHELLO_GROUPS`), when logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered: Option<OfferedGroups>,
}

/// What key-exchange groups requests negotiated.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NegotiatedGroups {
    /// Requests with a negotiated group logged (what the shares are of).
    pub requests: u64,
    /// Requests whose group was post-quantum (X25519MLKEM768, ...).
    pub post_quantum: Tally,
    /// Each group (OpenSSL's name, else as logged), by requests.
    pub groups: Vec<GroupRow>,
}

/// One negotiated group.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupRow {
    /// OpenSSL's name (`X25519MLKEM768` for a logged `0x11ec`), else as logged.
    pub group: String,
    /// Requests.
    pub count: u64,
    /// Of the requests with a group logged.
    pub share: f64,
    /// Whether it is post-quantum.
    pub post_quantum: bool,
}

/// Which requests and clients offered a post-quantum group.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OfferedGroups {
    /// Requests with offered groups logged.
    pub requests: u64,
    /// Those offering a post-quantum group.
    pub post_quantum: Tally,
    /// Distinct clients with offered groups logged.
    pub clients: u64,
    /// Clients that offered a post-quantum group at least once.
    pub post_quantum_clients: Tally,
    /// What one client is (`addr`, `addr+ua`).
    pub client_key: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The local OpenSSL 3.0 cannot negotiate ML-KEM: values as nginx documents them,
    /// names as OpenSSL 3.5 prints them and `0x11ec` as an older nginx prints a group it
    /// has no name for.
    #[test]
    fn names_and_hex_codes_are_one_group() {
        let mut a = GroupsAgg::default();
        for g in [
            "X25519MLKEM768",
            "0x11ec",
            "x25519",
            "X25519",
            "-",
            "prime256v1",
        ] {
            a.add_negotiated(Some(g.as_bytes()));
        }
        let mut b = GroupsAgg::default();
        b.add_offered(b"c1", Some(b"X25519MLKEM768:x25519"));
        b.add_offered(b"c1", Some(b"x25519"));
        b.add_offered(b"c2", Some(b"0x4a4a:0x11ec:x25519"));
        b.add_offered(b"c3", Some(b"x25519:prime256v1"));
        b.add_offered(b"c4", Some(b"-"));
        a.merge(b);
        let r = a.report(true, true, "addr");
        let n = r.negotiated.unwrap();
        assert_eq!(n.requests, 5);
        assert_eq!(n.post_quantum.count, 2);
        assert_eq!(n.groups[0].group, "X25519");
        assert_eq!(n.groups[1].group, "X25519MLKEM768");
        assert!(n.groups[1].post_quantum);
        let o = r.offered.unwrap();
        assert_eq!((o.requests, o.post_quantum.count), (4, 2));
        assert_eq!((o.clients, o.post_quantum_clients.count), (3, 2));
    }
}
