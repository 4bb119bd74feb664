use rocket::Route;
pub fn routes() -> Vec<Route> {
    vec![]
}
