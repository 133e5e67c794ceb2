//! Socket addresses the constructors accept, and error messages that name them.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// What `bind`, `connect` and `send_to` accept: the same shapes as
/// [`std::net::ToSocketAddrs`] (`"127.0.0.1:7000"`, `("localhost", 7000)`,
/// a [`SocketAddr`], a slice of them), and able to name itself in errors.
///
/// Host names are resolved with the system resolver on the calling thread,
/// which blocks it for the lookup; pass an address literal or a
/// [`SocketAddr`] where that matters (no lookup is made for those).
pub trait ToSocketAddrs: sealed::Sealed {}

pub(crate) mod sealed {
    use super::*;

    pub trait Sealed {
        /// Every address this names.
        fn addrs(&self) -> io::Result<Vec<SocketAddr>>;
        /// How errors name it.
        fn describe(&self) -> String;
    }
}

use sealed::Sealed;

fn std_addrs<A: std::net::ToSocketAddrs + ?Sized>(a: &A) -> io::Result<Vec<SocketAddr>> {
    Ok(a.to_socket_addrs()?.collect())
}

macro_rules! by_std {
    ($($t:ty),* $(,)?) => {$(
        impl ToSocketAddrs for $t {}
        impl Sealed for $t {
            fn addrs(&self) -> io::Result<Vec<SocketAddr>> {
                std_addrs(self)
            }
            fn describe(&self) -> String {
                Described(self).to_string()
            }
        }
    )*};
}

by_std!(
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6,
    (IpAddr, u16),
    (Ipv4Addr, u16),
    (Ipv6Addr, u16),
    (&str, u16),
    (String, u16),
    str,
    String,
);

impl ToSocketAddrs for [SocketAddr] {}
impl Sealed for [SocketAddr] {
    fn addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(self.to_vec())
    }
    fn describe(&self) -> String {
        let all: Vec<String> = self.iter().map(SocketAddr::to_string).collect();
        format!("[{}]", all.join(", "))
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: Sealed + ?Sized> Sealed for &T {
    fn addrs(&self) -> io::Result<Vec<SocketAddr>> {
        (**self).addrs()
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// Display for the address shapes: `host:port`, `[v6]:port`.
struct Described<'a, T: ?Sized>(&'a T);

macro_rules! describe_display {
    ($($t:ty),*) => {$(
        impl fmt::Display for Described<'_, $t> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self.0, f)
            }
        }
    )*};
}
describe_display!(SocketAddr, SocketAddrV4, SocketAddrV6, str, String);

macro_rules! describe_pair {
    ($($t:ty),*) => {$(
        impl fmt::Display for Described<'_, ($t, u16)> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let (host, port) = self.0;
                let host = host.to_string();
                if host.contains(':') {
                    write!(f, "[{host}]:{port}")
                } else {
                    write!(f, "{host}:{port}")
                }
            }
        }
    )*};
}
describe_pair!(IpAddr, Ipv4Addr, Ipv6Addr, &str, String);

/// Every address `a` names, or an error naming `a` (for `what`: "bind").
pub(crate) fn resolve<A: ToSocketAddrs + ?Sized>(a: &A, what: &str) -> io::Result<Vec<SocketAddr>> {
    match a.addrs() {
        Ok(v) if !v.is_empty() => Ok(v),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("could not {what} {}: it names no address", a.describe()),
        )),
        Err(e) => Err(context(
            e,
            format_args!("could not {what} {}: address lookup failed", a.describe()),
        )),
    }
}

/// Errors that name the address (shared with `fs/` and `process/`).
pub(crate) use crate::io_error::context;

/// Tries `op` on each address in turn; the error of the last one, naming it.
pub(crate) fn first_ok<A, T>(
    a: &A,
    what: &str,
    mut op: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T>
where
    A: ToSocketAddrs + ?Sized,
{
    let mut last = None;
    for addr in resolve(a, what)? {
        match op(addr) {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(context(e, format_args!("could not {what} {addr}"))),
        }
    }
    Err(last.expect("resolve returns at least one address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_it_resolves() {
        assert_eq!("127.0.0.1:80".describe(), "127.0.0.1:80");
        assert_eq!(
            ("::1".parse::<IpAddr>().unwrap(), 80).describe(),
            "[::1]:80"
        );
        assert_eq!(("localhost", 7).describe(), "localhost:7");
        let e = resolve("not an address", "bind").unwrap_err();
        assert!(e.to_string().contains("not an address"), "{e}");
        let none: &[SocketAddr] = &[];
        let e = resolve(none, "connect to").unwrap_err();
        assert!(e.to_string().contains("names no address"), "{e}");
        let e = context(
            io::Error::from(io::ErrorKind::AddrInUse),
            "could not bind x:1",
        );
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert!(e.to_string().starts_with("could not bind x:1: "), "{e}");
    }
}
