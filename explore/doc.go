// Package explore is a model checker for Redis lock scripts: it runs every
// interleaving of a few clients' script calls, clock jumps, process pauses
// and (on a primary with a replica) asynchronous replication, crashes and
// promotions on the offline simulator, and checks safety invariants and
// progress properties in every state it reaches.
//
// A Model declares actors, each a small program of Steps (a registry
// script call or a plain command, with Then choosing the next step from
// the reply and recording what the actor believes: Ctx.Acquire,
// Ctx.Release, local variables), plus invariants over the keyspace and
// those beliefs, and Bounds. Run explores breadth first with memoisation
// (a state is the keyspace, the pending replication, the clock, and every
// actor's position, budget, beliefs and variables), so the first
// violation it finds comes with a shortest trace: each step with its call,
// arguments and reply, what the actor now believes, and the keyspace diff.
// Check wraps Run for go test.
//
// Actors that run the same program but for their names can be declared
// interchangeable (Model.Symmetric): Run then explores one state of each
// class of states that differ only by a permutation of them, their names
// renamed wherever they stand in the keyspace, which cuts a group of k
// actors' states up to k! times. VerifySymmetry (CheckSymmetry in a test)
// checks such a declaration on a small instance: it explores every state
// beside its twins, the states the same moves reach with two actors'
// roles traded, and reports where the model tells them apart.
//
// Each step is atomic, as a script is in Redis; time moves only by
// environment events: a tick jumps the clock to the nearest deadline (a
// key's expiry or a lease an actor believes in), a pause jumps it past one
// actor's lease. An actor's own clock reads the server's time, and a lease
// it believes in runs from the moment of its call, so the model is
// optimistic about client clocks; client-clock designs still fail through
// their own logic (see the examples).
//
// See docs/modelcheck.md for a walk-through of modelling your own script.
package explore
