//! A connector built against `quarry:connector@0.99.0`, a version the host does not run. Its
//! manifest claims 0.1.0; the host must read the truth from the component and refuse it with
//! both versions named.

/// Bindings generated from the inline WIT below (generated code carries no docs).
#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
    inline: "
        package quarry:connector@0.99.0;
        interface source {
            ping: func() -> u32;
        }
        world connector {
            export source;
        }
    ",
    });
}

struct Next;

impl bindings::exports::quarry::connector::source::Guest for Next {
    fn ping() -> u32 {
        2
    }
}

bindings::export!(Next with_types_in bindings);
