//! The extended query protocol: Parse, Bind, Describe, Execute and Close, with the portals
//! they make.

use std::collections::VecDeque;
use std::sync::Arc;

use keyshard_types::{Dialect, Value};
use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::data::ParameterDescription;
use pgwire::messages::extendedquery::{Bind, Close, Parse};
use sqlparser::ast;

use super::Connection;
use super::implicit::Step;
use super::portals::{Portal, PortalState};
use super::streamed::{self, RowsOut};
use crate::postgres::Prepared;
use crate::postgres::describe::{
    Field, Fields, MAX_PARAMETERS, describe, highest_placeholder, reply_fields,
};
use crate::postgres::formats::{
    Bare, check_format_codes, check_written_as_asked, format_of, push_data_row,
    push_row_description,
};
use crate::postgres::pg_error::{PgError, unknown_portal, unknown_statement, wire_failed};
use crate::postgres::types;
use crate::postgres::wire::Wire;
use crate::reply::Reply;
use crate::session::{Planned, Statement, StatementKind};
use crate::sql::Sql;

/// An unnamed statement on sharded tables (INSERT, SELECT, UPDATE, DELETE) as parsed, with
/// what its parsing depended on. Drivers that do not name
/// their statements (pgbench -M extended, psycopg, JDBC before its prepareThreshold, sqlx's
/// unnamed queries) send Parse with the same text before every execution; parsing it again
/// would cost three times what the rest of the statement costs.
pub(super) struct Unnamed {
    type_oids: Vec<u32>,
    metadata_version: u64,
    prepared: Arc<Prepared>,
}

impl Connection {
    pub(super) async fn parse(&mut self, wire: &mut Wire, parse: Parse) -> Result<(), PgError> {
        let name = parse.name.unwrap_or_default();
        let metadata_version = self.engine.backend().metadata().version();
        if name.is_empty()
            && let Some(unnamed) = &self.last_unnamed
            && unnamed.prepared.sql == parse.query
            && unnamed.type_oids == parse.type_oids
            && unnamed.metadata_version == metadata_version
        {
            let prepared = Arc::clone(&unnamed.prepared);
            self.keep(name, prepared)?;
            return wire.bare(Bare::ParseComplete).await.map_err(wire_failed);
        }
        if !name.is_empty() && self.prepared.contains_key(&name) {
            return Err(PgError::new(
                "42P05",
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let sql = match crate::postgres::operators::plain(&parse.query) {
            std::borrow::Cow::Owned(plain) => plain,
            std::borrow::Cow::Borrowed(_) => parse.query,
        };
        // Refused before anything is sized by it: `$99999999999` would otherwise ask for a
        // parameter list of that length.
        let highest = highest_placeholder(&sql);
        if highest > MAX_PARAMETERS {
            return Err(PgError::new(
                "42P02",
                format!(
                    "there is no parameter ${highest}: a statement takes at most {MAX_PARAMETERS} \
                     parameters"
                ),
            ));
        }
        let text = Sql::new(&sql);
        let (statement, tree) = if crate::statements::is_blank(&sql) {
            (None, None)
        } else {
            let (statement, tree) = self.engine.prepare(text, Dialect::Postgres).await?;
            (Some(statement), tree)
        };
        let returning = tree.as_ref().and_then(returning_probe);
        let known = &self.known;
        let mut description = describe(text, tree, highest, &parse.type_oids, known).await;
        // As PostgreSQL does, refuse at Parse what will not parse: the client would otherwise
        // bind parameters typed by a guess.
        if let Some(e) = description.syntax_error.take() {
            return Err(PgError::new("42601", format!("syntax error: {e}")));
        }
        // Columns the statement's text does not tell: ask a shard to describe its SQL, or, for
        // an INSERT's RETURNING list, the same list selected from the table. A statement that
        // runs as written takes the parameters neither the client nor the text types as the
        // shard types them (`flagged = $1`: a boolean).
        let direct = matches!(
            statement.as_ref().map(|s| &s.kind),
            Some(StatementKind::Planned(Planned::Direct(_)))
        );
        let undeclared = |i: usize| parse.type_oids.get(i).is_none_or(|&declared| declared == 0);
        let open_params = direct && (0..description.params.len()).any(undeclared);
        let asks_a_shard = description.fields == Fields::Unknown || open_params;
        if asks_a_shard {
            let probe = match returning {
                Some(select) if description.fields == Fields::Unknown => self
                    .engine
                    .prepare(Sql::new(&select), Dialect::Postgres)
                    .await
                    .ok()
                    .map(|(s, _)| s),
                _ => None,
            };
            if let Some(statement) = probe.as_ref().or(statement.as_ref())
                && let Some((fields, shard_params)) = self.described_by_a_shard(statement).await
            {
                if description.fields == Fields::Unknown && !fields.is_empty() {
                    description.fields = Fields::Known(fields.into());
                }
                if probe.is_none() && direct {
                    for (i, oid) in shard_params.into_iter().enumerate() {
                        if undeclared(i)
                            && (types::is_native(oid)
                                || keyshard_types::wire::pg_cast_name(oid).is_some())
                            && let Some(param) = description.params.get_mut(i)
                            && *param == types::oid::TEXT
                        {
                            *param = oid;
                        }
                    }
                }
            }
        }
        if let Some(statement) = &statement
            && statement.param_count > description.params.len()
        {
            description
                .params
                .resize(statement.param_count, types::oid::TEXT);
        }
        let prepared = Arc::new(Prepared {
            weight: crate::memory::kept_estimate(&sql),
            sql,
            statement,
            description,
        });
        // Only statements on sharded tables are kept, and only when their description came
        // from their text: their plan and description then depend on the text and the
        // metadata alone, both checked at reuse. A shard's description, or a statement that
        // goes as written (whose tables the session's search_path names), may change apart.
        let on_sharded_tables = matches!(
            prepared.statement.as_ref().map(|s| &s.kind),
            Some(StatementKind::Planned(
                Planned::Insert(_) | Planned::Query(_)
            ))
        );
        self.last_unnamed =
            (name.is_empty() && on_sharded_tables && !asks_a_shard).then(|| Unnamed {
                type_oids: parse.type_oids,
                metadata_version,
                prepared: Arc::clone(&prepared),
            });
        self.keep(name, prepared)?;
        wire.bare(Bare::ParseComplete).await.map_err(wire_failed)
    }

    /// Keeps a parsed statement as `name`, within the session's memory.
    fn keep(&mut self, name: String, prepared: Arc<Prepared>) -> Result<(), PgError> {
        let what = StatementName(name.clone());
        (self.prepared).insert(&self.session.memory, name, prepared, what)?;
        Ok(())
    }

    /// The result columns of a statement and the parameter types it infers, as a shard
    /// describes them (see [`crate::engine::Engine::shard_description`]).
    async fn described_by_a_shard(&self, statement: &Statement) -> Option<(Vec<Field>, Vec<u32>)> {
        let description = self.engine.shard_description(statement).await;
        description.map(fields_of)
    }

    pub(super) async fn bind(&mut self, wire: &mut Wire, bind: Bind) -> Result<(), PgError> {
        let statement_name = bind.statement_name.unwrap_or_default();
        let prepared = self
            .prepared
            .get(&statement_name)
            .cloned()
            .ok_or_else(|| unknown_statement(&statement_name))?;
        let portal_name = bind.portal_name.unwrap_or_default();
        if !portal_name.is_empty() && self.portals.contains_key(&portal_name) {
            return Err(PgError::new(
                "42P03",
                format!("portal \"{portal_name}\" already exists"),
            ));
        }
        let types = &prepared.description.params;
        if bind.parameters.len() != types.len() {
            return Err(PgError::new(
                "08P01",
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{statement_name}\" requires {}",
                    bind.parameters.len(),
                    types.len()
                ),
            ));
        }
        let formats = &bind.parameter_format_codes;
        if formats.len() > 1 && formats.len() != types.len() {
            return Err(PgError::new(
                "08P01",
                format!(
                    "bind message has {} parameter formats but {} parameters",
                    formats.len(),
                    types.len()
                ),
            ));
        }
        check_format_codes(formats)?;
        check_format_codes(&bind.result_column_format_codes)?;
        let params = bind
            .parameters
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                let binary = format_of(formats, i) == 1;
                types::decode_param(bytes.as_deref(), types[i], binary)
                    .map_err(|e| PgError::from(e).with_context(&format!("parameter ${}", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let size = params.iter().map(Value::size).sum();
        let held = self.session.memory.charge(
            size,
            format_args!("the parameters of portal \"{portal_name}\""),
        )?;
        self.portals.insert(
            portal_name,
            Portal {
                prepared,
                params,
                formats: bind.result_column_format_codes,
                described: None,
                state: PortalState::Ready,
                _params_held: held,
            },
        );
        wire.bare(Bare::BindComplete).await.map_err(wire_failed)
    }

    /// Describe of a prepared statement: its parameter types and result columns.
    pub(super) async fn describe_statement(
        &self,
        wire: &mut Wire,
        name: &str,
    ) -> Result<(), PgError> {
        let prepared = self
            .prepared
            .get(name)
            .ok_or_else(|| unknown_statement(name))?;
        let description = &prepared.description;
        let params = ParameterDescription::new(description.params.clone());
        wire.send(Out::ParameterDescription(params))
            .await
            .map_err(wire_failed)?;
        match &description.fields {
            Fields::Known(fields) => {
                push_row_description(wire.buffer(), fields, &[])?;
                wire.queued().await.map_err(wire_failed)
            }
            Fields::None | Fields::Unknown => wire.bare(Bare::NoData).await.map_err(wire_failed),
        }
    }

    /// Describe of a portal: its result columns in the formats Bind asked for.
    pub(super) async fn describe_portal(
        &mut self,
        wire: &mut Wire,
        name: String,
    ) -> Result<(), PgError> {
        let Some(portal) = self.portals.get(&name) else {
            return Err(unknown_portal(&name));
        };
        let fields = match (&portal.prepared.description.fields, &portal.state) {
            (_, PortalState::Pending { fields, .. }) => Some(fields.clone()),
            (Fields::Known(fields), _) => Some(fields.clone()),
            (Fields::None, _) => None,
            (Fields::Unknown, _) => {
                let prepared = Arc::clone(&portal.prepared);
                let params = portal.params.clone();
                let formats = portal.formats.clone();
                // A read: the shard its parameters pick describes it, without running it.
                if let Some(statement) = &prepared.statement
                    && let Some((fields, _)) = self
                        .engine
                        .shard_description_with(statement, &params)
                        .await
                        .map(fields_of)
                    && !fields.is_empty()
                {
                    return self
                        .send_portal_description(wire, &name, Some(fields.into()))
                        .await;
                }
                // Only running it tells its columns (RETURNING of expressions, EXPLAIN, a
                // statement answered from its text): run it now and keep the rows for Execute.
                let (fields, rows, tag) = self
                    .run_prepared(wire, &prepared, &params, &formats, None, false)
                    .await?;
                // Only Execute streams a COPY's data.
                if self.session.copy_in.take().is_some() || self.session.copy_out.take().is_some() {
                    return Err(PgError::new("0A000", "Describe of a COPY portal"));
                }
                let has_rows = !fields.is_empty();
                if let Some(portal) = self.portals.get_mut(&name) {
                    portal.state = PortalState::Pending {
                        fields: fields.clone(),
                        rows,
                        tag,
                    };
                }
                has_rows.then_some(fields)
            }
        };
        self.send_portal_description(wire, &name, fields).await
    }

    /// RowDescription of a portal's columns in the formats Bind asked for, or NoData.
    async fn send_portal_description(
        &mut self,
        wire: &mut Wire,
        name: &str,
        fields: Option<Arc<[Field]>>,
    ) -> Result<(), PgError> {
        let Some(portal) = self.portals.get_mut(name) else {
            return Err(unknown_portal(name));
        };
        let described = fields
            .as_deref()
            .map(|fields| push_row_description(wire.buffer(), fields, &portal.formats))
            .transpose()?;
        portal.described = fields;
        match described {
            Some(()) => wire.queued().await,
            None => wire.bare(Bare::NoData).await,
        }
        .map_err(wire_failed)
    }

    /// Runs a portal's statement: the fields of its rows (`known`'s, the fields the client was
    /// told of, when as many as the columns), the rows, and its tag. `formats`: the result
    /// formats Bind asked for. When the client takes every row at once (`stream`), they go out
    /// as they arrive, and none come back.
    async fn run_prepared(
        &mut self,
        wire: &mut Wire,
        prepared: &Prepared,
        params: &[Value],
        formats: &[i16],
        known: Option<Arc<[Field]>>,
        stream: bool,
    ) -> Result<(Arc<[Field]>, VecDeque<Vec<Value>>, String), PgError> {
        self.session.binary_results = formats.contains(&1);
        let (sql, statement) = (prepared.text(), prepared.statement.as_ref());
        let ran = if stream {
            let out = RowsOut {
                describe: false,
                known: known.as_deref(),
                formats,
            };
            let text = self.proxy_text();
            let may_stream = statement.is_some_and(|s| s.may_stream());
            let (tap, batches) = keyshard_backend::stream::channel_if(may_stream);
            let run = std::pin::pin!(self.run(sql, statement, params, tap));
            streamed::answer(wire, run, batches, out, &text).await
        } else {
            Ok(self.run(sql, statement, params, None).await)
        };
        self.session.binary_results = false;
        let (reply, tag) = ran.map_err(wire_failed)??;
        // One field per column: the known ones fit when as many.
        let fields = match (known, &reply) {
            (Some(known), Reply::Rows { columns, .. }) if known.len() == columns.len() => known,
            _ => match reply_fields(&reply) {
                Fields::Known(fields) => fields,
                _ => Arc::default(),
            },
        };
        let rows = match reply {
            Reply::Rows { rows, .. } => rows,
            // Its rows went out as they came.
            Reply::Ok { .. } | Reply::Streamed { .. } => Vec::new(),
        };
        if !rows.is_empty() {
            check_written_as_asked(&self.proxy_text(), &fields, &rows, formats)?;
        }
        Ok((fields, rows.into(), tag))
    }

    /// Execute: the portal's next rows, at most `max_rows` of them (0: all).
    pub(super) async fn execute(
        &mut self,
        wire: &mut Wire,
        name: String,
        max_rows: i32,
    ) -> Result<(), PgError> {
        let Some(portal) = self.portals.get_mut(&name) else {
            return Err(unknown_portal(&name));
        };
        if portal.prepared.statement.is_none() {
            return wire
                .bare(Bare::EmptyQueryResponse)
                .await
                .map_err(wire_failed);
        }
        let state = std::mem::replace(&mut portal.state, PortalState::Ready);
        let (fields, mut rows, tag) = match state {
            PortalState::Pending { fields, rows, tag } => (fields, rows, tag),
            PortalState::Done(tag) => {
                let sent = wire.command_complete(&tag).await;
                portal.state = PortalState::Done(tag);
                return sent.map_err(wire_failed);
            }
            PortalState::Ready => {
                let prepared = Arc::clone(&portal.prepared);
                let params = std::mem::take(&mut portal.params);
                let described = portal.described.clone();
                let formats = portal.formats.clone();
                // The batch's implicit transaction block, opened unless this is its only
                // statement.
                let mut batch = std::mem::take(&mut self.batch);
                batch.before_execute(wire.sync_is_next());
                let step = self.enter(&mut batch, prepared.text()).await;
                self.batch = batch;
                if let Step::Answered(tag) = step? {
                    if let Some(portal) = self.portals.get_mut(&name) {
                        portal.state = PortalState::Done(tag.to_owned());
                    }
                    return wire.command_complete(tag).await.map_err(wire_failed);
                }
                // Rows go out as the client was told they would, when it was told.
                let known = described.or_else(|| match &prepared.description.fields {
                    Fields::Known(fields) => Some(fields.clone()),
                    _ => None,
                });
                // A portal read in parts keeps its rows between Executes.
                let stream = max_rows <= 0;
                let (fields, rows, tag) = self
                    .run_prepared(wire, &prepared, &params, &formats, known, stream)
                    .await?;
                let mut batch = std::mem::take(&mut self.batch);
                let warned = self.ran(wire, &mut batch, prepared.text()).await;
                self.batch = batch;
                warned.map_err(wire_failed)?;
                // COPY: its data comes in or goes out now, before the Sync.
                if let Some(copied) = self.pending_copy(wire).await.map_err(wire_failed)? {
                    let tag = copied?;
                    let sent = wire.command_complete(&tag).await;
                    if let Some(portal) = self.portals.get_mut(&name) {
                        portal.state = PortalState::Done(tag);
                    }
                    return sent.map_err(wire_failed);
                }
                (fields, rows, tag)
            }
        };
        let Some(portal) = self.portals.get_mut(&name) else {
            return Err(unknown_portal(&name));
        };
        let limit = usize::try_from(max_rows)
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or(usize::MAX);
        let mut sent = 0;
        while sent < limit {
            let Some(row) = rows.pop_front() else { break };
            push_data_row(wire.buffer(), &row, &fields, &portal.formats)?;
            wire.queued().await.map_err(wire_failed)?;
            sent += 1;
        }
        if rows.is_empty() {
            let sent = wire.command_complete(&tag).await;
            portal.state = PortalState::Done(tag);
            sent.map_err(wire_failed)
        } else {
            portal.state = PortalState::Pending { fields, rows, tag };
            wire.bare(Bare::PortalSuspended).await.map_err(wire_failed)
        }
    }

    pub(super) async fn close(&mut self, wire: &mut Wire, close: Close) -> Result<(), PgError> {
        let name = close.name.unwrap_or_default();
        if close.target_type == b'S' {
            self.prepared.remove(&name);
        } else {
            self.portals.remove(&name);
        }
        wire.bare(Bare::CloseComplete).await.map_err(wire_failed)
    }
}

/// `SELECT <returning list> FROM <table>` for an INSERT … RETURNING: its columns are the
/// INSERT's, and a shard describes a SELECT without anything being inserted.
fn returning_probe(tree: &ast::Statement) -> Option<String> {
    let ast::Statement::Insert(insert) = tree else {
        return None;
    };
    let ast::TableObject::TableName(table) = &insert.table else {
        return None;
    };
    let items = insert.returning.as_ref()?;
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    Some(format!("SELECT {} FROM {table}", items.join(", ")))
}

/// A prepared statement's name as an error names it.
struct StatementName(String);

impl std::fmt::Display for StatementName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_str() {
            "" => f.write_str("the unnamed statement"),
            name => write!(f, "prepared statement \"{name}\""),
        }
    }
}

/// A shard's description as RowDescription fields, with its parameter types.
fn fields_of(
    (columns, params): (Vec<keyshard_backend::Column>, Vec<u32>),
) -> (Vec<Field>, Vec<u32>) {
    let fields = columns
        .iter()
        .map(|c| Field::of_column(c, types::column_oid(c)))
        .collect();
    (fields, params)
}
