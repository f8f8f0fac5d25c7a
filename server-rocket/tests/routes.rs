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
