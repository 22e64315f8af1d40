package locks

// Version is the release of redlua this package belongs to (the module
// github.com/redlua/redlua, tagged v<Version>). docs/compatibility.md says
// what a release promises.
const Version = "0.1.0"
