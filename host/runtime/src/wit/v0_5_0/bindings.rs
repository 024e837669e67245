//! The bindings of `quarry:connector@0.5.0`, generated from its WIT. A plugin's stream handle
//! is the sandbox's [`OpenStream`](crate::sandbox::streams::OpenStream).

wasmtime::component::bindgen!({
    path: "../../wit/connector@0.5.0",
    world: "connector",
    with: {
        "quarry:connector/network.connection": crate::sandbox::streams::OpenStream,
    },
});
