//! A cuttable TCP relay for partition tests.

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A TCP relay to a server that can be cut: a network partition between the proxy and that
/// server, with both still running.
pub struct Relay {
    pub address: String,
    open: watch::Sender<bool>,
}

impl Relay {
    pub async fn start(server: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind relay");
        let address = listener.local_addr().expect("relay address").to_string();
        let (open, _) = watch::channel(true);
        let state = open.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut cut = state.subscribe();
                if !*cut.borrow_and_update() {
                    continue; // dropped: the client sees the server gone
                }
                let server = server.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(&server).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.wait_for(|open| !*open) => {}
                    }
                });
            }
        });
        Relay { address, open }
    }

    pub fn cut(&self) {
        self.open.send_replace(false);
    }

    pub fn restore(&self) {
        self.open.send_replace(true);
    }
}
