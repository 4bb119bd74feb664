//! One session with the server, driven synchronously: tokio-postgres's client and its
//! connection on a runtime of their own (one thread's, as the `postgres` crate does),
//! with what that crate does not offer: a pipeline. `pipeline` sends several
//! statements back to back and then reads their answers, so a transaction's writes
//! that nobody waits on cost one round trip together instead of one each.

use postgres::types::{ToSql, Type};
use postgres::{Row, SimpleQueryMessage, Statement};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::runtime::Runtime;
use tokio_postgres::{AsyncMessage, Error};

/// The connection's side of the socket, whatever its stream (TLS or not).
trait Socket: Send {
    fn poll_message(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<AsyncMessage, Error>>>;
}

impl<S, T> Socket for tokio_postgres::Connection<S, T>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send,
{
    fn poll_message(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<AsyncMessage, Error>>> {
        tokio_postgres::Connection::poll_message(self, cx)
    }
}

/// Polled while a call waits, as nothing else drives it; `None` once it ended, which
/// closes the client's requests (they fail as closed).
type Connection = Option<Box<dyn Socket>>;

pub struct Session {
    runtime: Runtime,
    connection: Connection,
    client: tokio_postgres::Client,
}

/// One statement of a pipeline.
pub enum Step<'a> {
    /// Runs it; its answer is how many rows it changed.
    Execute(&'a Statement, Vec<&'a (dyn ToSql + Sync)>),
    /// Runs it; its answer is its rows.
    Query(&'a Statement, Vec<&'a (dyn ToSql + Sync)>),
}

/// A step's answer.
pub enum Answer {
    Changed(u64),
    Rows(Vec<Row>),
}

type StepFuture<'a> = Pin<Box<dyn Future<Output = Result<Answer, Error>> + 'a>>;

impl Session {
    /// Connects with `config` through `tls`.
    pub fn connect<T>(config: &tokio_postgres::Config, tls: T) -> anyhow::Result<Session>
    where
        T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket> + 'static + Send,
        T::TlsConnect: Send,
        T::Stream: Send,
        <T::TlsConnect as tokio_postgres::tls::TlsConnect<tokio_postgres::Socket>>::Future: Send,
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (client, connection) = runtime.block_on(config.connect(tls))?;
        Ok(Session {
            runtime,
            connection: Some(Box::new(connection)),
            client,
        })
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Runs `future` (made from the client) to its end, driving the connection meanwhile.
    fn block_on<'c, T>(
        runtime: &Runtime,
        connection: &mut Connection,
        future: impl Future<Output = Result<T, Error>> + 'c,
    ) -> Result<T, Error> {
        let mut future = std::pin::pin!(future);
        runtime.block_on(std::future::poll_fn(|cx| {
            drive(connection, cx)?;
            future.as_mut().poll(cx)
        }))
    }

    pub fn prepare_typed(&mut self, text: &str, types: &[Type]) -> Result<Statement, Error> {
        let Session {
            runtime,
            connection,
            client,
        } = self;
        Session::block_on(runtime, connection, client.prepare_typed(text, types))
    }

    pub fn execute(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        let Session {
            runtime,
            connection,
            client,
        } = self;
        Session::block_on(
            runtime,
            connection,
            client.execute_raw(statement, params.iter().copied()),
        )
    }

    pub fn query(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        let Session {
            runtime,
            connection,
            client,
        } = self;
        Session::block_on(runtime, connection, client.query(statement, params))
    }

    pub fn batch_execute(&mut self, text: &str) -> Result<(), Error> {
        let Session {
            runtime,
            connection,
            client,
        } = self;
        Session::block_on(runtime, connection, client.batch_execute(text))
    }

    pub fn simple_query(&mut self, text: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        let Session {
            runtime,
            connection,
            client,
        } = self;
        Session::block_on(runtime, connection, client.simple_query(text))
    }

    /// Sends every step, in order, before reading any answer; each step's answer, in
    /// order. A step that fails does not stop the others being sent (inside a
    /// transaction the server then refuses them, and the caller rolls back).
    pub fn pipeline(&mut self, steps: &[Step<'_>]) -> Vec<Result<Answer, Error>> {
        let Session {
            runtime,
            connection,
            client,
        } = self;
        let client = &*client;
        let mut futures: Vec<Option<StepFuture<'_>>> =
            steps
                .iter()
                .map(|step| -> Option<StepFuture<'_>> {
                    Some(match step {
                        Step::Execute(statement, params) => Box::pin(async move {
                            client
                                .execute_raw(*statement, params.iter().copied())
                                .await
                                .map(Answer::Changed)
                        }),
                        Step::Query(statement, params) => Box::pin(async move {
                            client.query(*statement, params).await.map(Answer::Rows)
                        }),
                    })
                })
                .collect();
        let mut answers: Vec<Option<Result<Answer, Error>>> = steps.iter().map(|_| None).collect();
        runtime.block_on(std::future::poll_fn(|cx| {
            // Each future sends its statement when first polled: polling them in
            // order sends them in order.
            for (future, answer) in futures.iter_mut().zip(answers.iter_mut()) {
                if let Some(f) = future {
                    if let Poll::Ready(result) = f.as_mut().poll(cx) {
                        *answer = Some(result);
                        *future = None;
                    }
                }
            }
            if answers.iter().all(Option::is_some) {
                return Poll::Ready(());
            }
            if let Err(e) = drive(connection, cx) {
                // The connection is gone: the requests left fail as closed, once
                // polled again.
                log::debug!("the PostgreSQL connection failed mid-pipeline: {e}");
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        }));
        answers.into_iter().flatten().collect()
    }
}

/// Polls the connection until it would wait: it sends what the client queued and
/// hands answers to their requests. Notices are dropped (the sessions set
/// `client_min_messages = warning`); notifications go to the listener's own session.
/// A connection that ended or failed is dropped, which fails the requests left as
/// closed (and the session reads as closed from then on).
fn drive(connection: &mut Connection, cx: &mut Context<'_>) -> Result<(), Error> {
    loop {
        let Some(socket) = connection.as_mut() else {
            return Ok(());
        };
        match socket.poll_message(cx) {
            Poll::Ready(Some(Ok(_))) => {}
            Poll::Ready(Some(Err(e))) => {
                *connection = None;
                return Err(e);
            }
            Poll::Ready(None) => {
                *connection = None;
                return Ok(());
            }
            Poll::Pending => return Ok(()),
        }
    }
}

impl Drop for Session {
    /// Says goodbye (Terminate) and lets the connection finish, as the `postgres`
    /// crate does; a connection already gone finishes at once.
    fn drop(&mut self) {
        self.client.__private_api_close();
        let connection = &mut self.connection;
        self.runtime.block_on(std::future::poll_fn(|cx| {
            match connection.as_mut().map(|socket| socket.poll_message(cx)) {
                None | Some(Poll::Ready(None)) | Some(Poll::Ready(Some(Err(_)))) => Poll::Ready(()),
                Some(Poll::Ready(Some(Ok(_)))) => {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                Some(Poll::Pending) => Poll::Pending,
            }
        }));
    }
}
