//! A connector of `quarry:connector@0.1.0` whose `source` lacks `read-file` (and
//! `validate-config`): the host must refuse it at load, naming what is missing.

/// Bindings generated from the inline WIT below (generated code carries no docs).
#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
    inline: "
        package quarry:connector@0.1.0;
        interface source {
            list-docs: func(checkpoint: option<string>) -> u32;
            fetch-content: func(id: string) -> string;
        }
        world connector {
            export source;
        }
    ",
    });
}

struct Partial;

impl bindings::exports::quarry::connector::source::Guest for Partial {
    fn list_docs(_checkpoint: Option<String>) -> u32 {
        0
    }

    fn fetch_content(id: String) -> String {
        id
    }
}

bindings::export!(Partial with_types_in bindings);
