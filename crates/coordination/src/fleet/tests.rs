use super::*;

const NOW: i64 = 1_000_000;
const TTL: i64 = 30_000;

fn me() -> Recorder<'static> {
    Recorder {
        repository_id: "repo-b",
        repository: "JDBC mysql://b",
        instance_id: "me",
        ttl_millis: TTL,
        layout: "default",
    }
}

fn claim(worker_id: u16, epoch: u64) -> Claim {
    Claim {
        worker_id,
        epoch,
        high_water_millis: 0,
    }
}

fn row(repository_id: &str, worker_id: i64, instance: &str, epoch: i64) -> Remembered {
    Remembered {
        repository_id: repository_id.to_owned(),
        worker_id,
        repository: format!("JDBC {repository_id}"),
        instance_id: instance.to_owned(),
        epoch,
        mark: NOW + TTL,
        since: NOW - 60_000,
        renewed_at: NOW - 1_000,
        ttl: TTL,
        layout: "default".to_owned(),
    }
}

fn stopped(mut row: Remembered) -> Remembered {
    row.renewed_at = 0;
    row
}

#[test]
fn nothing_remembered_means_no_floor() {
    assert_eq!(judge("ds_0", me(), &claim(0, 1), &[], NOW).unwrap(), 0);
}

#[test]
fn a_live_older_repository_refuses_the_claim() {
    let rows = [row("repo-a", 3, "other", 9)];
    let err = judge("ds_0", me(), &claim(0, 1), &rows, NOW).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("another repository too: JDBC repo-a"),
        "{text}"
    );
    assert!(text.starts_with("data source 'ds_0'"), "{text}");
}

#[test]
fn a_stopped_repository_is_a_floor() {
    let rows = [stopped(row("repo-a", 3, "other", 9))];
    assert_eq!(
        judge("ds_0", me(), &claim(0, 1), &rows, NOW).unwrap(),
        NOW + TTL
    );
}

#[test]
fn of_two_live_repositories_the_one_generating_longer_goes_on() {
    // We have been live here since long ago; the other one just recorded and refuses.
    let mut mine = row("repo-b", 0, "me", 1);
    mine.since = NOW - 120_000;
    let mut newcomer = row("repo-a", 0, "other", 1);
    newcomer.since = NOW - 10;
    let rows = [mine, newcomer];
    assert!(judge("ds_0", me(), &claim(0, 1), &rows, NOW).is_ok());
    // Recording at the same moment: the tie goes to the smaller identity, on both sides.
    let mut a = row("repo-a", 0, "other", 1);
    let mut b = row("repo-b", 0, "me", 1);
    a.since = NOW;
    b.since = NOW;
    assert!(judge("ds_0", me(), &claim(0, 1), &[a, b], NOW).is_err());
}

#[test]
fn a_worker_id_live_under_another_instance_means_lost_claims() {
    let rows = [row("repo-b", 5, "other", 7)];
    let err = judge("ds_0", me(), &claim(5, 7), &rows, NOW).unwrap_err();
    assert!(err.to_string().contains("has lost claims"), "{err}");
    // Other worker ids of our own fleet are none of this claim's business.
    assert!(judge("ds_0", me(), &claim(6, 7), &rows, NOW).is_ok());
}

#[test]
fn an_epoch_used_already_is_behind() {
    let rows = [stopped(row("repo-b", 5, "other", 7))];
    assert!(matches!(
        judge("ds_0", me(), &claim(5, 7), &rows, NOW),
        Err(CoordinationError::EpochBehind { remembered: 7, .. })
    ));
    assert_eq!(
        judge("ds_0", me(), &claim(5, 8), &rows, NOW).unwrap(),
        NOW + TTL
    );
    // Our own renewal sees our own epoch.
    let rows = [row("repo-b", 5, "me", 8)];
    assert_eq!(
        judge("ds_0", me(), &claim(5, 8), &rows, NOW).unwrap(),
        NOW + TTL
    );
}

#[test]
fn a_live_instance_with_another_layout_refuses_the_claim() {
    let mut theirs = row("repo-b", 3, "other", 2);
    theirs.layout = "js".to_owned();
    let err = judge("ds_0", me(), &claim(0, 1), &[theirs], NOW).unwrap_err();
    assert!(err.to_string().contains("another key layout"), "{err}");
    let mut stopped = stopped(row("repo-b", 3, "other", 2));
    stopped.layout = "js".to_owned();
    assert!(judge("ds_0", me(), &claim(0, 1), &[stopped], NOW).is_ok());
}
