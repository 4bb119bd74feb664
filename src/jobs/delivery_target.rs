//! `--webhook-block-private`: which addresses a delivery may not reach, and the name
//! resolver that enforces it. The resolver is the one ureq connects with, so the
//! addresses checked are the addresses used: a name that answers a public address to
//! a check and a private one to the connection (DNS rebinding) gains nothing. The Host
//! header and TLS name stay the URL's host.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::OnceLock;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// Resolves with `inner`, then (when blocking) refuses the request if any address is
/// blocked.
#[derive(Debug)]
pub struct GuardedResolver<R = DefaultResolver> {
    inner: R,
    block_private: bool,
}

impl GuardedResolver {
    pub fn new(block_private: bool) -> Self {
        GuardedResolver {
            inner: DefaultResolver::default(),
            block_private,
        }
    }
}

impl<R: Resolver> Resolver for GuardedResolver<R> {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.inner.resolve(uri, config, timeout)?;
        if !self.block_private {
            return Ok(addrs);
        }
        match addrs.iter().find(|a| is_blocked(a.ip())) {
            Some(addr) => Err(ureq::Error::Io(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "refused: {} resolves to {}, a private, reserved or local address (--webhook-block-private)",
                    uri.host().unwrap_or_default(),
                    addr.ip()
                ),
            ))),
            None => Ok(addrs),
        }
    }
}

/// Not a public unicast address of another machine.
pub fn is_blocked(ip: IpAddr) -> bool {
    is_special(ip) || is_own_address(ip)
}

/// Loopback, private, link-local, shared, documentation, benchmarking, multicast and
/// reserved ranges, and IPv6 forms that embed such an IPv4 address.
pub fn is_special(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_special_v4(v4),
        IpAddr::V6(v6) => is_special_v6(v6),
    }
}

fn is_special_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    v4.is_private() // 10/8, 172.16/12, 192.168/16
        || v4.is_loopback() // 127/8
        || v4.is_link_local() // 169.254/16
        || v4.is_multicast() // 224/4
        || a == 0 // "this network"
        || a >= 240 // reserved 240/4 and the broadcast address
        || (a == 100 && (b & 0xc0) == 64) // shared (CGNAT) 100.64/10
        || (a == 198 && (b & 0xfe) == 18) // benchmarking 198.18/15
        || matches!((a, b, c), (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113))
        || (a, b, c) == (192, 88, 99) // 6to4 relay anycast
}

fn is_special_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    let embedded =
        |hi: u16, lo: u16| is_special_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    v6.is_unspecified()
        || v6.is_loopback()
        || v6.is_multicast() // ff00::/8
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site local fec0::/10 (deprecated)
        || (s[0], s[1]) == (0x2001, 0x0db8) // documentation 2001:db8::/32
        || (s[0], s[1]) == (0x2001, 0) // Teredo 2001::/32 (tunnels to any IPv4)
        || (s[0], s[1], s[2]) == (0x2001, 2, 0) // benchmarking 2001:2::/48
        || (s[0], s[1], s[2]) == (0x64, 0xff9b, 1) // local-use NAT64 64:ff9b:1::/48
        || s[..4] == [0x100, 0, 0, 0] // discard 100::/64
        || (s[..6] == [0, 0, 0, 0, 0, 0xffff] && embedded(s[6], s[7])) // IPv4-mapped
        || (s[..6] == [0; 6] && embedded(s[6], s[7])) // IPv4-compatible
        || (s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] && embedded(s[6], s[7])) // NAT64
        || (s[0] == 0x2002 && embedded(s[1], s[2])) // 6to4 2002::/16
}

/// One of this machine's own addresses: binding a socket to it succeeds. Where the
/// system lets a socket bind any address (`ip_nonlocal_bind`), binding proves nothing,
/// so only the special ranges apply.
pub fn is_own_address(ip: IpAddr) -> bool {
    static V4_FREEBIND: OnceLock<bool> = OnceLock::new();
    static V6_FREEBIND: OnceLock<bool> = OnceLock::new();
    // Documentation addresses are never assigned: binding one means any bind succeeds.
    let freebind = match ip {
        IpAddr::V4(_) => *V4_FREEBIND.get_or_init(|| binds(Ipv4Addr::new(192, 0, 2, 1).into())),
        IpAddr::V6(_) => *V6_FREEBIND
            .get_or_init(|| binds(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).into())),
    };
    !freebind && binds(ip)
}

fn binds(ip: IpAddr) -> bool {
    UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use ureq::unversioned::resolver::ArrayVec;

    #[test]
    fn every_special_range_is_blocked() {
        for ip in [
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.8.8.8",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "2001:db8::1",
            "2001:0:4136:e378::1",
            "2001:2::1",
            "100::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
        ] {
            assert!(is_special(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[test]
    fn public_addresses_are_not_special() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "198.20.0.1",
            "223.255.255.255",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(!is_special(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[test]
    fn own_addresses_are_blocked_and_others_are_not() {
        assert!(is_own_address("127.0.0.1".parse().expect("ip")));
        assert!(!is_own_address("8.8.8.8".parse().expect("ip")));
        // The address this machine would send from, when it has a route out.
        let probe = UdpSocket::bind("0.0.0.0:0").expect("socket");
        if probe.connect("8.8.8.8:53").is_ok() {
            let own = probe.local_addr().expect("local").ip();
            assert!(is_blocked(own), "{own}");
        }
    }

    /// Answers with the next list of addresses, as a rebinding name server would.
    #[derive(Debug)]
    struct Answers(Mutex<Vec<&'static str>>);

    impl Resolver for Answers {
        fn resolve(
            &self,
            _: &Uri,
            _: &Config,
            _: NextTimeout,
        ) -> Result<ResolvedSocketAddrs, ureq::Error> {
            let next = self.0.lock().expect("answers").remove(0);
            let mut out: ResolvedSocketAddrs =
                ArrayVec::from_fn(|_| "0.0.0.0:0".parse().expect("addr"));
            for a in next.split(',') {
                out.push(a.parse().expect("socket addr"));
            }
            Ok(out)
        }
    }

    fn resolve(r: &impl Resolver) -> Result<Vec<SocketAddr>, String> {
        let uri: Uri = "https://rebind.example/hook".parse().expect("uri");
        r.resolve(&uri, &Config::default(), NextTimeout::default())
            .map(|a| a.to_vec())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn each_connection_uses_the_addresses_that_passed_the_check() {
        let guarded = GuardedResolver {
            inner: Answers(Mutex::new(vec![
                "93.184.215.14:443",
                "127.0.0.1:443",
                "93.184.215.14:443,10.0.0.1:443",
            ])),
            block_private: true,
        };
        assert_eq!(
            resolve(&guarded),
            Ok(vec!["93.184.215.14:443".parse().expect("addr")])
        );
        let refused = resolve(&guarded).expect_err("rebound to loopback");
        assert!(
            refused.contains("rebind.example resolves to 127.0.0.1"),
            "{refused}"
        );
        assert!(refused.contains("--webhook-block-private"), "{refused}");
        assert!(
            resolve(&guarded).is_err(),
            "one private answer refuses them all"
        );
        let open = GuardedResolver {
            inner: Answers(Mutex::new(vec!["127.0.0.1:443"])),
            block_private: false,
        };
        assert_eq!(
            resolve(&open),
            Ok(vec!["127.0.0.1:443".parse().expect("addr")])
        );
    }
}
