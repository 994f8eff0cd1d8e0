mod common;
use common::*;

#[test]
fn module_loads_and_answers_hot_view() {
    let s = Server::start();
    let mut c = s.conn();
    let v: (i64, i64, String, String) = redis::cmd("HOT.VIEW")
        .arg("hot:{t}")
        .arg("a")
        .arg("v")
        .query(&mut c)
        .unwrap();
    assert_eq!((v.0, v.1, v.3.as_str()), (1, 1, "counted"));
    assert!(err(&mut c, &["HOT.VIEW", "x"]).contains("wrong number of arguments"));
}
