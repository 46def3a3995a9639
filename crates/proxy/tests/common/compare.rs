//! Running one statement through the proxy and against a plain database, and writing down
//! what each answered, so that the two can be compared.

use sqlx::Row;
use tokio_postgres::SimpleQueryMessage;

/// What a statement gave: the first column of its rows, or its error code.
pub type Answer = Result<Vec<String>, String>;

pub async fn pg_answer(client: &tokio_postgres::Client, sql: &str, extended: bool) -> Answer {
    let code = |e: tokio_postgres::Error| match e.code() {
        Some(code) => code.code().to_owned(),
        None => e.to_string(),
    };
    if extended {
        let rows = client.query(sql, &[]).await.map_err(code)?;
        Ok(rows
            .iter()
            .map(|r| r.get::<_, i64>(0).to_string())
            .collect())
    } else {
        let messages = client.simple_query(sql).await.map_err(code)?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                _ => None,
            })
            .collect())
    }
}

pub async fn mysql_answer(conn: &mut sqlx::MySqlConnection, sql: &str) -> Answer {
    match sqlx::raw_sql(sql).fetch_all(conn).await {
        Ok(rows) => Ok(rows
            .iter()
            .map(|r| {
                r.try_get::<i64, _>(0)
                    .map(|v| v.to_string())
                    .or_else(|_| r.try_get::<u64, _>(0).map(|v| v.to_string()))
                    .or_else(|_| r.try_get::<String, _>(0))
                    .unwrap_or_else(|e| e.to_string())
            })
            .collect()),
        Err(e) => Err(e
            .as_database_error()
            .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
            .map_or_else(|| e.to_string(), |d| d.number().to_string())),
    }
}

/// Each statement with its answer, for a readable failure.
pub fn transcript(script: &[&str], answers: &[Answer]) -> Vec<String> {
    script
        .iter()
        .zip(answers)
        .map(|(sql, answer)| format!("{sql} -> {answer:?}"))
        .collect()
}
