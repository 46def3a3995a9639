//! The portals Bind makes and Execute runs: each one's statement, parameters, result formats
//! and how far its rows went.

use std::collections::VecDeque;
use std::sync::Arc;

use keyshard_types::Value;

use crate::memory::Charge;
use crate::postgres::Prepared;
use crate::postgres::describe::Field;

/// A bound statement (Bind) waiting to be executed.
pub(super) struct Portal {
    pub(super) prepared: Arc<Prepared>,
    pub(super) params: Vec<Value>,
    pub(super) formats: Vec<i16>,
    /// The columns Describe reported, which the rows must then match.
    pub(super) described: Option<Arc<[Field]>>,
    pub(super) state: PortalState,
    /// Its parameters, held within the session's memory until the portal closes.
    pub(super) _params_held: Charge,
}

/// A session's portals. The unnamed one, which nearly every driver binds for every statement,
/// is kept apart: finding it in the map hashed its name four times a statement.
#[derive(Default)]
pub(super) struct Portals {
    unnamed: Option<Portal>,
    named: foldhash::HashMap<String, Portal>,
}

impl Portals {
    pub(super) fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub(super) fn get(&self, name: &str) -> Option<&Portal> {
        match name {
            "" => self.unnamed.as_ref(),
            name => self.named.get(name),
        }
    }

    pub(super) fn get_mut(&mut self, name: &str) -> Option<&mut Portal> {
        match name {
            "" => self.unnamed.as_mut(),
            name => self.named.get_mut(name),
        }
    }

    pub(super) fn insert(&mut self, name: String, portal: Portal) {
        match name.is_empty() {
            true => self.unnamed = Some(portal),
            false => {
                self.named.insert(name, portal);
            }
        }
    }

    pub(super) fn remove(&mut self, name: &str) {
        match name {
            "" => self.unnamed = None,
            name => {
                self.named.remove(name);
            }
        }
    }

    /// Closes every portal (a transaction's end).
    pub(super) fn clear(&mut self) {
        self.unnamed = None;
        self.named.clear();
    }
}

pub(super) enum PortalState {
    Ready,
    /// Ran (at Describe, or an Execute that hit its row limit): rows not yet sent.
    Pending {
        fields: Arc<[Field]>,
        rows: VecDeque<Vec<Value>>,
        tag: String,
    },
    Done(String),
}
