//! Every route of `common::ROUTES`, in process through `server_rocket::app`.

use rocket::config::LogLevel;
use rocket::http::Status;
use rocket::local::blocking::Client;

fn client(layers: usize) -> Client {
    let figment = rocket::Config::figment().merge(("log_level", LogLevel::Off));
    Client::tracked(server_rocket::app(figment, layers)).unwrap()
}

#[test]
fn every_route_answers_the_table_byte_for_byte() {
    for layers in [0, 1, 10] {
        let client = client(layers);
        for route in common::ROUTES {
            let response = client.get(route.path).dispatch();
            assert_eq!(response.status(), Status::Ok, "{} layers={layers}", route.path);
            assert_eq!(response.headers().get_one("Content-Type"), Some(route.content_type.as_str()), "{}", route.path);
            assert_eq!(response.into_bytes().unwrap(), route.expected_body(), "{}", route.path);
        }
    }
}

#[test]
fn unknown_path_is_404() {
    let client = client(10);
    assert_eq!(client.get(common::UNKNOWN_PATH).dispatch().status(), Status::NotFound);
    assert_eq!(client.get("/state/unknown").dispatch().status(), Status::NotFound);
}

/// (touches, FatState clones) of one request to `path` through `layers` layers.
fn counted(client: &Client, path: &str) -> (u64, u64) {
    common::state::counts::take();
    assert_eq!(client.get(path).dispatch().status(), Status::Ok);
    common::state::counts::take()
}

#[test]
fn every_layer_obtains_the_state_as_documented() {
    for layers in [0, 1, 7] {
        let client = client(layers);
        // Each fairing borrows the managed state (`&State<T>`): touched, never cloned.
        assert_eq!(counted(&client, "/state/fat"), (layers as u64, 0), "{layers} layers");
        assert_eq!(counted(&client, "/state/arc"), (layers as u64, 0), "{layers} layers");
        // The fairings run on every route but touch the state only on /state/*.
        assert_eq!(counted(&client, "/plaintext"), (0, 0));
    }
}
