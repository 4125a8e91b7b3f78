use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;

fn file(path: &Path) -> Vec<Target> {
    vec![Target::File(path.to_owned())]
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    OutputPlan::new(file(path), &[])?.commit(&[bytes])
}

fn reason(error: OutputError) -> String {
    std::error::Error::source(&error).unwrap().to_string()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn appears_only_on_commit() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.csv");
    std::fs::write(&target, "old").unwrap();
    {
        let plan = OutputPlan::new(file(&target), &[]).unwrap();
        let mut file = plan.stream().unwrap().unwrap();
        file.writer().write_all(b"new, partial").unwrap();
        // dropped without commit
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
    write(&target, b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    assert_eq!(listing(dir.path()), ["out.csv"]);
}

#[test]
fn dash_is_stdout() {
    assert_eq!(Target::from_out(Some(Path::new("-"))), Target::Stdout);
    assert_eq!(Target::from_out(None), Target::Stdout);
    assert_eq!(
        Target::from_out(Some(Path::new("./-"))),
        Target::File("./-".into())
    );
}

#[test]
fn a_replaced_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.csv");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = std::fs::metadata(&target).unwrap();
    write(&target, b"new").unwrap();
    let after = std::fs::metadata(&target).unwrap();
    assert_eq!(after.mode() & 0o7777, 0o640);
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
}

#[test]
fn a_symlink_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let real = dir.path().join("real/out.csv");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink("real/out.csv", &link).unwrap();
    write(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    assert_eq!(listing(&dir.path().join("real")), ["out.csv"]);
    // A dangling link makes the file it names.
    let dangling = dir.path().join("dangling.csv");
    std::os::unix::fs::symlink("real/new.csv", &dangling).unwrap();
    write(&dangling, b"made").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("real/new.csv")).unwrap(),
        "made"
    );
}

#[test]
fn refusals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("input.yaml"), "x").unwrap();
    std::fs::write(d.join("linked"), "x").unwrap();
    std::fs::hard_link(d.join("linked"), d.join("other-name")).unwrap();
    std::os::unix::fs::symlink("input.yaml", d.join("to-input")).unwrap();
    std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
    let inputs = [d.join("input.yaml")];
    let refused = |name: &str| {
        OutputPlan::new(file(&d.join(name)), &inputs)
            .map(|_| ())
            .map_err(reason)
            .unwrap_err()
    };
    assert!(refused("").contains("a directory"));
    assert!(refused("input.yaml").contains("one of this command's inputs"));
    assert!(refused("to-input").contains("(`"));
    assert!(refused("linked").contains("2 hard links"));
    assert!(refused("loop").contains("symlinks"));
    assert!(refused("missing/out.csv").contains("does not exist"));
    let stream = OutputPlan::new(file(Path::new("/dev/stdout")), &[]).unwrap_err();
    assert!(reason(stream).contains("use `--out -`"));
    let twice = vec![Target::File(d.join("a")), Target::File(d.join("./a"))];
    let twice = OutputPlan::new(twice, &[]).unwrap_err();
    assert!(reason(twice).contains("the same file as"));
}

#[test]
fn a_name_as_long_as_allowed_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("n".repeat(255));
    write(&target, b"long").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "long");
    write(&target, b"again").unwrap();
    assert_eq!(listing(dir.path()).len(), 1);
}

#[test]
fn two_files_appear_together_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.svg");
    let b = dir.path().join("b.md");
    let plan = OutputPlan::new(vec![Target::File(a.clone()), Target::File(b.clone())], &[]);
    // Made a directory after the check: the second file cannot be written, and neither is.
    let plan = plan.unwrap();
    std::fs::create_dir(&b).unwrap();
    assert!(plan.commit(&[b"svg", b"md"]).is_err());
    assert_eq!(listing(dir.path()), ["b.md"]);
    std::fs::remove_dir(&b).unwrap();
    let plan = OutputPlan::new(vec![Target::File(a.clone()), Target::File(b.clone())], &[]);
    plan.unwrap().commit(&[b"svg", b"md"]).unwrap();
    assert_eq!(listing(dir.path()), ["a.svg", "b.md"]);
}

/// The target's folder renamed while its file is written (a sweep's `--out` folder): the
/// commit fails, saying so, and the temporary file, which moved with the folder, is removed
/// from it; dropped without a commit after such a move, the same.
#[test]
fn a_folder_moved_while_written_keeps_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let (folder, moved) = (dir.path().join("out"), dir.path().join("moved"));
    std::fs::create_dir(&folder).unwrap();
    let target = folder.join("out.csv");
    let plan = OutputPlan::new(file(&target), &[]).unwrap();
    let mut out = plan.stream().unwrap().unwrap();
    out.writer().write_all(&[b'x'; 1 << 16]).unwrap();
    std::fs::rename(&folder, &moved).unwrap();
    assert_eq!(
        listing(&moved).len(),
        1,
        "the temporary file moved with the folder"
    );
    let error = out.commit().unwrap_err().to_string();
    assert!(
        error.contains("was moved or removed while it was written"),
        "{error}"
    );
    assert!(error.contains(&folder.display().to_string()), "{error}");
    assert!(listing(&moved).is_empty(), "{:?}", listing(&moved));
    assert!(!folder.exists());

    // Dropped (an error, Ctrl-C) after a move; and a folder named as the old one made since.
    std::fs::rename(&moved, &folder).unwrap();
    let plan = OutputPlan::new(file(&target), &[]).unwrap();
    let mut out = plan.stream().unwrap().unwrap();
    out.writer().write_all(b"partial").unwrap();
    std::fs::rename(&folder, &moved).unwrap();
    std::fs::create_dir(&folder).unwrap();
    let second = out.temp().try_clone().unwrap();
    drop(out);
    assert!(listing(&moved).is_empty() && listing(&folder).is_empty());
    second.remove(); // already gone: no error, nothing else removed
    assert!(listing(&moved).is_empty());
}

/// A rename that fails for another reason (the target became a folder) removes the
/// temporary file too, and says what the system said.
#[test]
fn a_failed_rename_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.csv");
    let plan = OutputPlan::new(file(&target), &[]).unwrap();
    let mut out = plan.stream().unwrap().unwrap();
    out.writer().write_all(b"rows").unwrap();
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("inside"), "x").unwrap();
    let error = out.commit().unwrap_err().to_string();
    assert!(!error.contains("was moved"), "{error}");
    assert_eq!(listing(dir.path()), ["out.csv"]);
}
