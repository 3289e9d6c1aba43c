//! Host bindings of the plugin contract (`plugin-sdk/wit/plugin.wit`). The three
//! worlds share one copy of the `types` interface.

pub mod strategy {
    wasmtime::component::bindgen!({
        path: "../plugin-sdk/wit",
        world: "uatu:plugin/strategy-plugin",
    });
}

pub mod extractor {
    wasmtime::component::bindgen!({
        path: "../plugin-sdk/wit",
        world: "uatu:plugin/extractor-plugin",
        with: { "uatu:plugin/types": super::strategy::uatu::plugin::types },
    });
}

pub mod sink {
    wasmtime::component::bindgen!({
        path: "../plugin-sdk/wit",
        world: "uatu:plugin/sink-plugin",
        with: { "uatu:plugin/types": super::strategy::uatu::plugin::types },
    });
}

pub use strategy::uatu::plugin::types;
