//! The `network` interface of 0.5.0 on [`HostState`]: a plugin's streams, answered by the
//! sandbox's stream gate (`sandbox/streams.rs`).

use std::time::Duration;

use wasmtime::component::Resource;

use super::bindings::quarry::connector::network;
use super::bindings::quarry::connector::types::{
    ConnectionError as WitError, Security as WitSecurity,
};
use crate::sandbox::connection_error::StreamError;
use crate::sandbox::instance::HostState;
use crate::sandbox::starttls::Upgrade;
use crate::sandbox::streams::{OpenStream, Security};

impl network::Host for HostState {
    fn connect(
        &mut self,
        host: String,
        port: u16,
        security: WitSecurity,
    ) -> Result<Resource<OpenStream>, WitError> {
        let security = match security {
            WitSecurity::Tls => Security::Tls,
            WitSecurity::StarttlsImap => Security::StartTls(Upgrade::Imap),
            WitSecurity::StarttlsSmtp => Security::StartTls(Upgrade::Smtp),
            WitSecurity::StarttlsPop3 => Security::StartTls(Upgrade::Pop3),
            WitSecurity::Plain => Security::Plain,
        };
        let (table, gate) = self.streams();
        let stream = gate.open(&host, port, security).map_err(wit_error)?;
        table
            .push(stream)
            .map_err(|e| WitError::Other(format!("the host could not keep the connection: {e}")))
    }
}

impl network::HostConnection for HostState {
    fn read(
        &mut self,
        stream: Resource<OpenStream>,
        max_bytes: u32,
        timeout_ms: u32,
    ) -> Result<Vec<u8>, WitError> {
        let (table, gate) = self.streams();
        let stream = table.get(&stream).map_err(|_| WitError::Closed)?;
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        gate.read(stream, max_bytes, timeout).map_err(wit_error)
    }

    fn write(&mut self, stream: Resource<OpenStream>, data: Vec<u8>) -> Result<(), WitError> {
        let (table, gate) = self.streams();
        let stream = table.get(&stream).map_err(|_| WitError::Closed)?;
        gate.write(stream, &data).map_err(wit_error)
    }

    fn drop(&mut self, stream: Resource<OpenStream>) -> wasmtime::Result<()> {
        let (table, gate) = self.streams();
        let stream = table.delete(stream)?;
        gate.close(&stream);
        Ok(())
    }
}

fn wit_error(error: StreamError) -> WitError {
    match error {
        StreamError::Denied(m) => WitError::Denied(m),
        StreamError::Unreachable(m) => WitError::Unreachable(m),
        StreamError::Tls(m) => WitError::Tls(m),
        StreamError::TimedOut => WitError::TimedOut,
        StreamError::Closed => WitError::Closed,
        StreamError::Limit(m) => WitError::Limit(m),
        StreamError::Other(m) => WitError::Other(m),
    }
}
