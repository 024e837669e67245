//! A plugin in words: name, version, what it does, where it is from and what it asks for.

use quarry_core::terminal::printable;
use quarry_runtime::Plugin;

/// Prints `plugin`, found at `from`.
pub fn describe(plugin: &Plugin, from: &str) {
    let m = plugin.manifest();
    println!(
        "{} {} ({}, WIT {})",
        printable(&m.name),
        printable(&m.version),
        printable(&m.id),
        printable(&m.wit)
    );
    println!("  {}", printable(&m.description));
    println!("  from {}", printable(from));
    for ask in plugin.requested_capabilities() {
        println!("  - {}", printable(&ask.to_string()));
    }
}
