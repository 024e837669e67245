//! What the sandbox enforces, told with no instance state: which folders are Quarry's own and
//! how an opened file is recognised as one of them (`protected`, `own_files`), what a grant is
//! and the sandbox it sets up (`grant`), which hosts a grant lets a plugin reach (`hosts`), the
//! secret values kept out of every text that leaves the sandbox (`secrets`), and when a call
//! must end (`deadline`). The sandbox layer (`crate::sandbox`) applies them to each instance.

pub(crate) mod deadline;
pub(crate) mod grant;
pub(crate) mod hosts;
pub(crate) mod own_files;
pub(crate) mod protected;
pub(crate) mod secrets;
