//! Attempts to reach the network through WASI sockets and `wasi:http`.

use quarry_sdk::Config;
use wasi::sockets::instance_network::instance_network;
use wasi::sockets::ip_name_lookup::resolve_addresses;
use wasi::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
use wasi::sockets::tcp_create_socket::create_tcp_socket;

/// Tries a TCP connection to `127.0.0.1:<port>` (config `port`), a name lookup, and HTTP GETs of
/// `http://127.0.0.1:<port>/` and `http://localhost:<port>/`, and reports each as
/// `DENIED <what>: <error>` or `CONNECTED <what>`.
pub fn attempts(config: &Config) -> String {
    let port: u16 = config.get("port").and_then(|p| p.parse().ok()).unwrap_or(9);
    let mut report = String::new();
    let what = format!("tcp 127.0.0.1:{port}");
    match connect(port) {
        Ok(()) => report.push_str(&format!("CONNECTED {what}\n")),
        Err(e) => report.push_str(&format!("DENIED {what}: {e}\n")),
    }
    let network = instance_network();
    match resolve_addresses(&network, "localhost") {
        Ok(stream) => {
            stream.subscribe().block();
            match stream.resolve_next_address() {
                Ok(addr) => report.push_str(&format!("CONNECTED dns localhost: {addr:?}\n")),
                Err(e) => report.push_str(&format!("DENIED dns localhost: {e:?}\n")),
            }
        }
        Err(e) => report.push_str(&format!("DENIED dns localhost: {e:?}\n")),
    }
    for host in ["127.0.0.1", "localhost"] {
        let url = format!("http://{host}:{port}/");
        match quarry_sdk::http::get(&url, &[]) {
            Ok(response) => {
                report.push_str(&format!("CONNECTED http {url}: {}\n", response.status));
            }
            Err(e) => report.push_str(&format!("DENIED http {url}: {e:?}\n")),
        }
    }
    report
}

fn connect(port: u16) -> Result<(), String> {
    let network = instance_network();
    let socket = create_tcp_socket(IpAddressFamily::Ipv4).map_err(|e| format!("{e:?}"))?;
    let address = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port,
        address: (127, 0, 0, 1),
    });
    socket
        .start_connect(&network, address)
        .map_err(|e| format!("{e:?}"))?;
    socket.subscribe().block();
    socket
        .finish_connect()
        .map(|_| ())
        .map_err(|e| format!("{e:?}"))
}
