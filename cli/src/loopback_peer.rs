//! Who is on the other end of a loopback TCP connection: the network servers (`memloop mcp
//! --http`, `memloop ui`) serve a loopback peer only when it runs as the server's own user.
//!
//! Loopback is reachable by every user of the machine, and a token is the servers' only other
//! access control; a token that leaked (a cookie a browser sent to a sibling loopback port, a
//! log) would otherwise let another local user in. A remote peer (with `--allow-remote`) is not
//! checked: it has only its token.
//!
//! The kernel names each TCP socket's owner: on Linux, `/proc/net/tcp` (and `tcp6`) lists
//! every socket with its addresses and uid; the peer's socket is the one whose local address
//! is the connection's remote one and the other way round. Elsewhere the owner is unknown and
//! the peer is served (docs/limits.md says so).

use std::net::SocketAddr;

/// Whether the server may serve the connection from `peer` to `local`: true for a peer on
/// another machine (not checked here), for a peer of this process's user, and where the
/// platform cannot tell; false for a peer of another user, or one the kernel no longer lists.
pub(crate) fn may_serve(local: SocketAddr, peer: SocketAddr) -> bool {
    // A peer on this machine: loopback, or one of this machine's own addresses (a server
    // bound to every address with --allow-remote, reached through its LAN address).
    let on_this_machine =
        peer.ip().is_loopback() || is_mapped_loopback(peer) || peer.ip() == local.ip();
    if !on_this_machine {
        return true;
    }
    match owner(local, peer) {
        Lookup::Mine(mine) => mine,
        Lookup::NotListed => false,
        Lookup::Unknown => true,
    }
}

/// `::ffff:127.x.y.z`, as a dual-stack listener sees an IPv4 loopback peer.
fn is_mapped_loopback(peer: SocketAddr) -> bool {
    match peer.ip() {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        std::net::IpAddr::V4(_) => false,
    }
}

/// What the kernel says of the peer's socket.
#[derive(Debug, PartialEq, Eq)]
enum Lookup {
    /// Listed: owned by this process's user (true) or another (false).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Mine(bool),
    /// Listed nowhere (the connection is gone, or the tables could not be read).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    NotListed,
    /// This platform does not tell.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    Unknown,
}

#[cfg(target_os = "linux")]
fn owner(local: SocketAddr, peer: SocketAddr) -> Lookup {
    // The peer's socket is of the connection's family: one table is read.
    let table = match peer {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    std::fs::read_to_string(table)
        .ok()
        .and_then(|text| find_owner(&text, peer, local))
        .map_or(Lookup::NotListed, |uid| {
            Lookup::Mine(uid == rustix::process::geteuid().as_raw())
        })
}

#[cfg(not(target_os = "linux"))]
fn owner(_local: SocketAddr, _peer: SocketAddr) -> Lookup {
    Lookup::Unknown
}

/// The uid of the socket in `table` (the text of `/proc/net/tcp` or `tcp6`) whose local
/// address is `from` and remote address `to`.
#[cfg(target_os = "linux")]
fn find_owner(table: &str, from: SocketAddr, to: SocketAddr) -> Option<u32> {
    let (from, to) = (proc_address(from), proc_address(to));
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local rem st tx:rx tr:when retrnsmt uid …
        if fields.len() > 7
            && fields[1].eq_ignore_ascii_case(&from)
            && fields[2].eq_ignore_ascii_case(&to)
        {
            fields[7].parse().ok()
        } else {
            None
        }
    })
}

/// An address as `/proc/net/tcp{,6}` writes it: the address as 32-bit words, each in the
/// machine's byte order, in hex, then `:` and the port in hex. An IPv4 address seen on an
/// IPv6 socket is written as the mapped address, in the IPv6 table.
// The kernel writes each 32-bit word in the host's byte order: native order is the point here.
#[allow(clippy::host_endian_bytes)]
#[cfg(target_os = "linux")]
fn proc_address(a: SocketAddr) -> String {
    let words: Vec<[u8; 4]> = match a.ip() {
        std::net::IpAddr::V4(v4) => vec![v4.octets()],
        std::net::IpAddr::V6(v6) => v6
            .octets()
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect(),
    };
    let mut out: String = words
        .iter()
        .map(|w| format!("{:08X}", u32::from_ne_bytes(*w)))
        .collect();
    out.push_str(&format!(":{:04X}", a.port()));
    out
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_written_as_the_kernel_writes_them() {
        let a: SocketAddr = "127.0.0.1:7734".parse().unwrap();
        let expected = if cfg!(target_endian = "little") {
            "0100007F:1E36"
        } else {
            "7F000001:1E36"
        };
        assert_eq!(proc_address(a), expected);
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             \x20  0: {expected} 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1002        0 1 1 0 20 4 30 10 -1\n"
        );
        let peer: SocketAddr = "127.0.0.1:50000".parse().unwrap();
        assert_eq!(find_owner(&table, a, peer), Some(1002));
        assert_eq!(find_owner(&table, peer, a), None);
    }

    #[test]
    fn a_connection_of_this_process_is_its_own_users() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let local = server_side.local_addr().unwrap();
        assert_eq!(owner(local, peer), Lookup::Mine(true));
        assert!(may_serve(local, peer));
        drop(client);
        drop(server_side);
        // A peer the kernel does not list (no such connection) is refused.
        let nobody: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(!may_serve(local, nobody));
    }
}
