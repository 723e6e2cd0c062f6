//! Where vendor calls may go (security review 32.7): a vendor cannot be pointed inward.
//!
//! Every address a call would connect to is checked: the host's addresses as resolved
//! (by [`Lookup`], once per new connection, and the connection is made to exactly the
//! addresses checked, so a DNS answer that changes later cannot move an approved call
//! to an internal host), or the address a URL spells (the `url` crate reads every
//! spelling of an IPv4 address, `0x7f.1` and `2130706433` included, as the WHATWG URL
//! standard says).
//!
//! - Never: the unspecified address, broadcast, multicast, and the cloud metadata and
//!   credential endpoints (`169.254.169.254`, `169.254.170.2` and `169.254.170.23` of
//!   AWS containers, `100.100.100.200` of Alibaba, `fd00:ec2::254`).
//! - Loopback (`127.0.0.0/8`, `::1`) and this machine's own addresses on any interface
//!   (a public one reaches services listening on all interfaces): only when
//!   `GRAFT_VENDOR_LOOPBACK=allow` (local development and tests).
//! - Private and link-local ranges (RFC 1918, RFC 6598 shared space, RFC 2544
//!   benchmarking, IETF protocol assignments, `fc00::/7`, `169.254.0.0/16`, `fe80::/10`):
//!   only for a vendor a person marked internal.
//! - IPv4-mapped and NAT64 (`64:ff9b::/96`) IPv6 addresses are judged by the IPv4
//!   address they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Which addresses one call may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reach {
    /// A person marked the vendor internal: private and link-local ranges are allowed.
    pub internal: bool,
    /// `GRAFT_VENDOR_LOOPBACK=allow`: loopback is allowed.
    pub loopback: bool,
}

/// An address a call may not go to, with the reason as a sentence's end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the vendor's address {address} is {what}; {remedy}")]
pub struct Refused {
    pub address: IpAddr,
    /// What kind of address it is.
    pub what: &'static str,
    /// What a person can do.
    pub remedy: &'static str,
}

/// The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d`), if any.
fn embedded_v4(ip: &Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0])
        .then(|| Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
}

/// The address `url`'s host spells (`http://10.0.0.1/`, `http://[::1]/`, any IPv4
/// spelling the URL standard reads), if it spells one rather than naming a host: such an
/// address never reaches the resolver, so it is checked with [`check`] itself.
pub fn literal_ip(url: &url::Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

/// The address [`CheckedResolver`] refused, if that is why `e` (an HTTP client's error)
/// happened: it is somewhere in the error's chain of sources.
pub fn refused_in<'e>(e: &'e (dyn std::error::Error + 'static)) -> Option<&'e Refused> {
    let mut source = Some(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<Refused>() {
            return Some(r);
        }
        source = s.source();
    }
    None
}

/// Checks one address against `reach`. Errors: why it may not be called.
pub fn check(ip: IpAddr, reach: Reach) -> Result<(), Refused> {
    const NEVER: &str = "never called";
    const INTERNAL: &str = "a person can mark the vendor internal (the vendor's page, or graft vendor set VENDOR --internal) if it really lives on the internal network";
    const LOOPBACK: &str =
        "set GRAFT_VENDOR_LOOPBACK=allow to call vendors on this machine (development and tests)";
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => embedded_v4(&v6),
    };
    let refuse = |what, remedy| {
        Err(Refused {
            address: ip,
            what,
            remedy,
        })
    };
    if let Some(a) = v4 {
        let o = a.octets();
        if a.is_unspecified() || o[0] == 0 || a.is_broadcast() || a.is_multicast() || o[0] >= 240 {
            return refuse("not a host address", NEVER);
        }
        if [
            Ipv4Addr::new(169, 254, 169, 254),
            Ipv4Addr::new(169, 254, 170, 2),
            Ipv4Addr::new(169, 254, 170, 23),
            Ipv4Addr::new(100, 100, 100, 200),
        ]
        .contains(&a)
        {
            return refuse("a cloud metadata endpoint", NEVER);
        }
        if a.is_loopback() {
            return if reach.loopback {
                Ok(())
            } else {
                refuse("a loopback address", LOOPBACK)
            };
        }
        let private = a.is_private()
            || (o[0] == 100 && (64..128).contains(&o[1])) // RFC 6598 shared space
            || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // RFC 2544 benchmarking
            || (o[0] == 192 && o[1] == 0 && o[2] == 0); // IETF protocol assignments
        if private || a.is_link_local() {
            return if reach.internal {
                Ok(())
            } else {
                refuse("a private or link-local address", INTERNAL)
            };
        }
        return local_as_loopback(IpAddr::V4(a), reach, ip);
    }
    let IpAddr::V6(v6) = ip else {
        unreachable!("IPv4 was handled above")
    };
    let s = v6.segments();
    if v6.is_unspecified() || v6.is_multicast() {
        return refuse("not a host address", NEVER);
    }
    if s == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] {
        return refuse("a cloud metadata endpoint", NEVER);
    }
    if v6.is_loopback() {
        return if reach.loopback {
            Ok(())
        } else {
            refuse("a loopback address", LOOPBACK)
        };
    }
    let unique_local = (s[0] & 0xfe00) == 0xfc00;
    let link_local = (s[0] & 0xffc0) == 0xfe80;
    if unique_local || link_local {
        return if reach.internal {
            Ok(())
        } else {
            refuse("a private or link-local address", INTERNAL)
        };
    }
    local_as_loopback(ip, reach, ip)
}

/// An otherwise public address that belongs to this machine is loopback: a socket can
/// be bound to exactly the addresses of the machine's own interfaces.
fn local_as_loopback(ip: IpAddr, reach: Reach, shown: IpAddr) -> Result<(), Refused> {
    if reach.loopback || std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_err() {
        return Ok(());
    }
    Err(Refused {
        address: shown,
        what: "an address of this machine",
        remedy: "set GRAFT_VENDOR_LOOPBACK=allow to call vendors on this machine (development and tests)",
    })
}

/// A name resolver (the system's by default; tests give a stub).
pub trait Lookup: Send + Sync + std::fmt::Debug {
    /// The addresses of `host` (port 0). Errors: the name does not resolve.
    fn lookup(
        &self,
        host: String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(
        &self,
        host: String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
    {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// A reqwest resolver that answers only the addresses `reach` allows, so the client
/// connects to exactly what was checked. A name with none gets [`Refused`] (the first
/// refused address), which the proxy turns into words.
#[derive(Debug, Clone)]
pub struct CheckedResolver {
    /// How names are resolved.
    pub lookup: Arc<dyn Lookup>,
    /// What may be reached.
    pub reach: Reach,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (lookup, reach) = (self.lookup.clone(), self.reach);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let all = lookup.lookup(host).await?;
            let mut refused = None;
            let ok: Vec<SocketAddr> = all
                .into_iter()
                .filter(|ip| match check(*ip, reach) {
                    Ok(()) => true,
                    Err(r) => {
                        refused.get_or_insert(r);
                        false
                    }
                })
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            match (ok.is_empty(), refused) {
                (true, Some(r)) => Err(Box::new(r) as Box<dyn std::error::Error + Send + Sync>),
                _ => Ok(Box::new(ok.into_iter()) as reqwest::dns::Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inward_addresses_need_a_persons_word() {
        let public = Reach::default();
        let internal = Reach {
            internal: true,
            loopback: false,
        };
        let dev = Reach {
            internal: false,
            loopback: true,
        };
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        for ok in ["8.8.8.8", "2606:4700::1111", "192.0.2.1", "100.128.0.1"] {
            assert!(check(ip(ok), public).is_ok(), "{ok}");
        }
        for inward in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.1.1",
            "fc00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "198.18.0.1",
        ] {
            assert!(check(ip(inward), public).is_err(), "{inward}");
            assert!(check(ip(inward), internal).is_ok(), "{inward}");
        }
        for lo in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert!(
                check(ip(lo), public).is_err() && check(ip(lo), internal).is_err(),
                "{lo}"
            );
            assert!(check(ip(lo), dev).is_ok(), "{lo}");
        }
        let all = Reach {
            internal: true,
            loopback: true,
        };
        for never in [
            "0.0.0.0",
            "169.254.169.254",
            "169.254.170.2",
            "100.100.100.200",
            "255.255.255.255",
            "224.0.0.1",
            "::",
            "ff02::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
        ] {
            assert!(check(ip(never), all).is_err(), "{never}");
        }
        // an address of one of this machine's interfaces is this machine: loopback
        let mine = std::net::UdpSocket::bind("0.0.0.0:0")
            .and_then(|s| {
                s.connect("192.0.2.1:9")?;
                s.local_addr()
            })
            .map(|a| a.ip())
            .ok()
            .filter(|a| !a.is_loopback() && !a.is_unspecified());
        if let Some(mine) = mine {
            let r = check(mine, public);
            if !matches!(mine, IpAddr::V4(v) if v.is_private()) {
                assert!(r.unwrap_err().what.contains("this machine"), "{mine}");
            }
            assert!(check(mine, dev).is_ok(), "{mine}");
        }
        // the URL parser reads odd spellings as the address they are
        for spelled in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
        ] {
            let host = url::Url::parse(spelled).unwrap().host().unwrap().to_owned();
            assert_eq!(
                host,
                url::Host::<String>::Ipv4(Ipv4Addr::LOCALHOST),
                "{spelled}"
            );
        }
    }
}
