//! The bindings of `quarry:connector@0.4.0`, generated from its WIT.

wasmtime::component::bindgen!({
    path: "../../wit/connector@0.4.0",
    world: "connector",
});
