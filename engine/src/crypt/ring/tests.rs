use super::*;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

#[test]
fn a_users_key_keeps_its_time_and_a_key_without_one_reads_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let enc = Encryption::key_file(dir.path().join("k"));
    let mut ring = KeyRing::create(&enc).unwrap();
    let ana = ring.ensure(Label::User("ana".into()), 1_700).unwrap();
    let index = ring.find(&Label::Index).unwrap().clone();
    // Through the key file...
    let back = KeyRing::load(&enc).unwrap();
    assert_eq!(back.by_id(&ana).unwrap().since, 1_700);
    assert_eq!(back.by_id(&index.id).unwrap().since, 0);
    // ...and through the bytes a key directory carries.
    let k = back.by_id(&ana).unwrap();
    let plain = key_plain(k);
    assert_eq!(plain[0], 1 | SINCE_FLAG);
    let again = key_of_plain(ana, &plain).unwrap();
    assert_eq!((again.since, again.label.clone()), (1_700, k.label.clone()));
    // The layout of a key without a time is the one before times (a key directory entry
    // another device wrote then reads as made before every erasure).
    let old = [&[1u8][..], k.key.as_slice(), b"ana"].concat();
    assert_eq!(key_of_plain(ana, &old).unwrap().since, 0);
    // A time of 0 is never written with the flag; a cut time is refused.
    let zero = [
        &[1 | SINCE_FLAG][..],
        k.key.as_slice(),
        &0i64.to_le_bytes(),
        b"ana",
    ]
    .concat();
    assert!(key_of_plain(ana, &zero).is_none());
    assert!(key_of_plain(ana, &plain[..1 + KEY_LEN + 4]).is_none());
    // A new key of a user comes first: it seals what is sealed for her from here.
    let new = ring.add_user_key(Label::User("ana".into()), 5_000).unwrap();
    assert_eq!(ring.find(&Label::User("ana".into())).unwrap().id, new);
    assert_eq!(
        KeyRing::load(&enc)
            .unwrap()
            .find(&Label::User("ana".into()))
            .unwrap()
            .id,
        new
    );
}

#[test]
fn an_exported_ring_imports_on_another_device_with_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let enc = Encryption::key_file(dir.path().join("k"));
    let mut ring = KeyRing::create(&enc).unwrap();
    ring.ensure(Label::User("ana".into()), 1).unwrap();
    ring.destroy(&Label::User("ana".into()), 7);
    ring.ensure(Label::User("bob".into()), 1).unwrap();
    let text = ring.export("carry me").unwrap();
    assert!(text.starts_with(EXPORT_PREFIX));
    // No key travels in the clear: not the file's secret, not a data key.
    let KekFile::Key { secret } = &ring.source else {
        panic!("a key ring")
    };
    let json = URL_SAFE_NO_PAD
        .decode(&text[EXPORT_PREFIX.len()..])
        .unwrap();
    let json = String::from_utf8(json).unwrap();
    assert!(!json.contains(secret.as_str()));
    for k in &ring.keys {
        assert!(!json.contains(&hex::encode(k.key.as_slice())));
    }

    // The wrong passphrase, damaged or foreign text: typed errors, no file.
    let other = Encryption::passphrase(dir.path().join("k2"), "device two");
    assert!(matches!(
        KeyRing::import(&text, "carry you", &other),
        Err(KeyError::Wrong { .. })
    ));
    let mut damaged = text.to_string();
    damaged.truncate(damaged.len() - 9);
    for bad in [damaged.as_str(), "memloop-ring1:!!", "hello", ""] {
        assert!(
            matches!(
                KeyRing::import(bad, "carry me", &other),
                Err(KeyError::Malformed { .. })
            ),
            "{bad}"
        );
    }
    assert!(!other.key_file.exists());

    KeyRing::import(&text, "carry me", &other).unwrap();
    let imported = KeyRing::load(&other).unwrap();
    assert_eq!(imported.id, ring.id);
    for k in &ring.keys {
        let i = imported.by_id(&k.id).expect("every key travels");
        assert_eq!((i.label.clone(), *i.key), (k.label.clone(), *k.key));
    }
    assert_eq!(imported.keys.len(), ring.keys.len());
    assert!(imported.was_destroyed(&ring.destroyed[0].id));
    // An existing key file is never replaced.
    assert!(matches!(
        KeyRing::import(&text, "carry me", &enc),
        Err(KeyError::Io { .. })
    ));
    assert!(KeyRing::load(&enc).is_ok());
}

#[test]
fn a_ring_round_trips_and_refuses_the_wrong_passphrase() {
    let dir = tempfile::tempdir().unwrap();
    let enc = Encryption::passphrase(dir.path().join("k"), "correct horse");
    let mut ring = KeyRing::create(&enc).unwrap();
    let ana = ring.ensure(Label::User("ana".into()), 1).unwrap();
    // A second holder of the same key file sees it, and adds its own without losing it.
    let mut other = KeyRing::load(&enc).unwrap();
    let bob = other.ensure(Label::User("bob".into()), 1).unwrap();
    ring.ensure(Label::User("cy".into()), 1).unwrap();
    assert_eq!(
        KeyRing::load(&enc)
            .unwrap()
            .find(&Label::User("bob".into()))
            .unwrap()
            .id,
        bob
    );
    let back = KeyRing::load(&enc).unwrap();
    assert_eq!(back.find(&Label::User("ana".into())).unwrap().id, ana);
    let wrong = Encryption::passphrase(dir.path().join("k"), "wrong");
    assert!(matches!(KeyRing::load(&wrong), Err(KeyError::Wrong { .. })));
    let none = Encryption::key_file(dir.path().join("k"));
    assert!(matches!(
        KeyRing::load(&none),
        Err(KeyError::Missing { .. })
    ));
    // A truncated key file is damaged, not a panic.
    let bytes = std::fs::read(dir.path().join("k")).unwrap();
    for cut in [0, 1, bytes.len() / 2, bytes.len() - 2] {
        std::fs::write(dir.path().join("k"), &bytes[..cut]).unwrap();
        assert!(
            matches!(KeyRing::load(&enc), Err(KeyError::Malformed { .. })),
            "{cut}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_key_file_others_may_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let enc = Encryption::key_file(dir.path().join("k"));
    KeyRing::create(&enc).unwrap();
    for mode in [0o644, 0o640, 0o604, 0o660] {
        std::fs::set_permissions(&enc.key_file, std::fs::Permissions::from_mode(mode)).unwrap();
        assert!(
            matches!(KeyRing::load(&enc), Err(KeyError::Exposed { why, .. }) if why.contains(&format!("mode {mode:o}"))),
            "{mode:o}"
        );
    }
    std::fs::set_permissions(&enc.key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    KeyRing::load(&enc).unwrap();
}

#[test]
fn a_ring_naming_a_key_twice_is_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let enc = Encryption::key_file(dir.path().join("k"));
    let mut ring = KeyRing::create(&enc).unwrap();
    ring.ensure(Label::User("ana".into()), 1).unwrap();
    let mut file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&enc.key_file).unwrap()).unwrap();
    let keys = file["keys"].as_array_mut().unwrap();
    let first = keys[0].clone();
    keys.push(first);
    std::fs::write(&enc.key_file, serde_json::to_vec(&file).unwrap()).unwrap();
    assert!(matches!(
        KeyRing::load(&enc),
        Err(KeyError::Malformed { detail, .. }) if detail.contains("named twice")
    ));
}

#[test]
fn argon2_work_past_its_bound_is_refused_at_once() {
    let p = Path::new("k");
    for (m, t, lanes) in [
        (4 << 20, 1, 1),
        (256 * 1024, 8, 1),
        (19 * 1024, 64, 64),
        (19 * 1024, 2, 9),
    ] {
        assert!(
            matches!(
                derive(p, "pw", m, t, lanes, &[0; 16]),
                Err(KeyError::Malformed { .. })
            ),
            "{m} {t} {lanes}"
        );
    }
}
