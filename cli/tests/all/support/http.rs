//! A static file server on 127.0.0.1 (axum with tower-http's `ServeDir`): web apps for the
//! web device, a release for install.sh.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Serves `dir` on 127.0.0.1 on a thread of its own for the rest of the test.
pub fn serve(dir: PathBuf) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            tx.send(listener.local_addr().expect("address"))
                .expect("send address");
            let app = axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir));
            let _ = axum::serve(listener, app).await;
        });
    });
    rx.recv().expect("the server's address")
}
