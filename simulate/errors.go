package simulate

// Redis 7.0's error texts, as the server sends them. Texts with a %s take
// the command or option name through fmt.Sprintf.
const (
	errWrongType         = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errWrongArgs         = "ERR wrong number of arguments for '%s' command"
	errUnknownCommand    = "ERR unknown command '%s', with args beginning with: %s"
	errEmptyCommand      = "ERR empty command"
	errSubcommandSyntax  = "ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP."
	errUnknownSubcommand = "ERR unknown subcommand '%s'. Try %s HELP."
	errNotInteger        = "ERR value is not an integer or out of range"
	errNotFloat          = "ERR value is not a valid float"
	errSyntax            = "ERR syntax error"
	errNoKey             = "ERR no such key"
	errIndexRange        = "ERR index out of range"
	errNegativeOption    = "ERR %s can't be negative"
	errNotPositive       = "ERR value is out of range, must be positive"

	// Strings and counters.
	errOverflow      = "ERR increment or decrement would overflow"
	errDecrOverflow  = "ERR decrement would overflow"
	errIncrNaN       = "ERR increment would produce NaN or Infinity"
	errValueNaN      = "ERR value is NaN or Infinity"
	errStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errOffsetRange   = "ERR offset is out of range"
	errInvalidSetEx  = "ERR invalid expire time in 'set' command"
	errLCSNotStrings = "ERR The specified keys must contain string values"
	errLCSLenAndIdx  = "ERR If you want both the length and indexes, please just use IDX."
	errLCSMemory     = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	errBitOffset     = "ERR bit offset is not an integer or out of range"
	errBitValue      = "ERR bit is not an integer or out of range"
	errBitposBit     = "ERR The bit argument must be 1 or 0."
	errBitopNot      = "ERR BITOP NOT must be called with a single source key."
	errBitfieldType  = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errBitfieldOver  = "ERR Invalid OVERFLOW type specified"
	errBitfieldRO    = "ERR BITFIELD_RO only supports the GET subcommand"

	// Keys and expiry.
	errExpireRange       = "ERR invalid expire time in '%s' command"
	errUnsupportedOption = "ERR Unsupported option %s"
	errExpireNXXX        = "ERR NX and XX, GT or LT options at the same time are not compatible"
	errExpireGTLT        = "ERR GT and LT options at the same time are not compatible"
	errInvalidCursor     = "ERR invalid cursor"
	errSameObject        = "ERR source and destination objects are the same"
	errDBIndexInt        = "ERR value is out of range, value must between -2147483648 and 2147483647"
	errDBRange           = "ERR DB index is out of range"
	errSwapDBFirst       = "ERR invalid first DB index"
	errSwapDBSecond      = "ERR invalid second DB index"
	errSortScore         = "ERR One or more scores can't be converted into double"
	errBusyKey           = "BUSYKEY Target key name already exists."
	errRestoreTTL        = "ERR Invalid TTL value, must be >= 0"
	errRestoreIdle       = "ERR Invalid IDLETIME value, must be >= 0"
	errRestoreFreq       = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	errRestoreBadData    = "ERR Bad data format"

	// Hashes.
	errHashNotInt   = "ERR hash value is not an integer"
	errHashNotFloat = "ERR hash value is not a float"
	errHRandRange   = "ERR value is out of range"
	errHRandCount   = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

	// Lists.
	errTimeoutNotFloat = "ERR timeout is not a float or out of range"
	errTimeoutNegative = "ERR timeout is negative"
	errLPosRankZero    = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errListNumKeys     = "ERR numkeys should be greater than 0"
	errListCount       = "ERR count should be greater than 0"

	// Sorted sets.
	errZaddNXXX        = "ERR XX and NX options at the same time are not compatible"
	errZaddGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZaddIncr        = "ERR INCR option supports a single increment-element pair"
	errScoreNaN        = "ERR resulting score is not a number (NaN)"
	errMinMaxFloat     = "ERR min or max is not a float"
	errMinMaxLex       = "ERR min or max not valid string range item"
	errZRangeLimit     = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	errZRangeLexScores = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"

	// Sets and sorted sets: algebra, random members, multi-key pops.
	errNumKeysPositive = "ERR numkeys should be greater than 0"
	errLimitNegative   = "ERR LIMIT can't be negative"
	errCountRange      = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errCountPositive   = "ERR count should be greater than 0"
	errAtLeastOneKey   = "ERR at least 1 input key is needed for '%s' command"
	errWeightNotFloat  = "ERR weight value is not a float"
	errValueRange      = "ERR value is out of range"
	errTooManyPicks    = "ERR simulate: %s count %d asks for more elements than the simulator answers at once (at most 4194304 repeated picks)"

	// HyperLogLog.
	errHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLCorrupt   = "INVALIDOBJ Corrupted HLL object detected"

	// Geo.
	errGeoInvalidPair    = "ERR invalid longitude,latitude pair %s,%s"
	errGeoUnit           = "ERR unsupported unit provided. please use M, KM, FT, MI"
	errGeoMember         = "ERR could not decode requested zset member"
	errGeoRadius         = "ERR need numeric radius"
	errGeoRadiusNegative = "ERR radius cannot be negative"
	errGeoWidth          = "ERR need numeric width"
	errGeoHeight         = "ERR need numeric height"
	errGeoBoxNegative    = "ERR height or width cannot be negative"
	errGeoCount          = "ERR COUNT must be > 0"
	errGeoStoreWith      = "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	errGeoFrom           = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s"
	errGeoBy             = "ERR exactly one of BYRADIUS and BYBOX can be specified for %s"
	errGeoAny            = "ERR the ANY argument requires COUNT argument"

	// Streams.
	errStreamID         = "ERR Invalid stream ID specified as stream command argument"
	errStreamTooLow     = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errStreamZeroID     = "ERR The ID specified in XADD must be greater than 0-0"
	errStreamExhausted  = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errStreamTooLarge   = "ERR Elements are too large to be stored"
	errStreamLimit      = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	errStreamLimitNoHow = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	errStreamNoStrategy = "ERR syntax error, XTRIM must be called with a trimming strategy"
	errStreamBothTrims  = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	errStreamMaxLen     = "ERR The MAXLEN argument must be >= 0."
	errStreamLimitNeg   = "ERR The LIMIT argument must be >= 0."
	errStreamStartID    = "ERR invalid start ID for the interval"
	errStreamEndID      = "ERR invalid end ID for the interval"

	// Scripting.
	errNoSuchScript    = "NOSCRIPT No matching script. Please use EVAL."
	errNumKeysTooMany  = "ERR Number of keys can't be greater than number of args"
	errNumKeysNegative = "ERR Number of keys can't be negative"
	errROWriteScript   = "ERR Can not execute a script with write flag using *_ro command."
	errShebangInvalid  = "ERR Invalid script shebang"
	errShebangNoEngine = "ERR Invalid engine in script shebang"
	errShebangEngine   = "ERR Unexpected engine in script shebang: "
	errShebangOption   = "ERR Unknown lua shebang option: "
	errShebangFlag     = "ERR Unexpected flag in script shebang: "
	errCompilingScript = "ERR Error compiling script (new function): "
	errWrongArgsOrType = "ERR wrong number or type of arguments"
	errStackLimit      = "ERR reached lua stack limit"

	// Commands a script may not run (script.c, script_lua.c).
	errNoArgs        = "ERR Please specify at least one argument for this redis lib call"
	errBadArgType    = "ERR Lua redis lib command arguments must be strings or integers"
	errUnknownCmd    = "ERR Unknown Redis command called from script"
	errScriptArity   = "ERR Wrong number of args calling Redis command from script"
	errNoScript      = "ERR This Redis command is not allowed from script"
	errReadOnlyWrite = "ERR Write commands are not allowed from read-only scripts."

	// Raised inside Lua by the sandbox and its libraries, as Lua errors.
	errNonexistentGlobal = "Script attempted to access nonexistent global variable '%s'"
	errReadonly          = "Attempt to modify a readonly table"
	errLuaWrongArgs      = "wrong number of arguments"
	errRandomInterval    = "interval is empty"

	// Functions.
	errLibraryNoMetadata    = "ERR Missing library metadata"
	errLibraryBadMetadata   = "ERR Invalid library metadata"
	errLibraryMetadataValue = "ERR Invalid metadata value given: "
	errLibraryNameTwice     = "ERR Invalid metadata value, name argument was given multiple times"
	errLibraryNoName        = "ERR Library name was not given"
	errEngineNotFound       = "ERR Engine '%s' not found"
	errFunctionName         = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	errLibraryExists        = "ERR Library '%s' already exists"
	errFunctionExists       = "ERR Function %s already exists"
	errCompilingFunction    = "ERR Error compiling function: "
	errRegisteringFunctions = "ERR Error registering functions: "
	errNoFunctions          = "ERR No functions registered"
	errFunctionNotFound     = "ERR Function not found"
	errBadNumKeys           = "ERR Bad number of keys provided"
	errLibraryNotFound      = "ERR Library not found"
	errLoadUnknownOption    = "ERR Unknown option given: %s"
	errLoadNoCode           = "ERR Function code is missing"
	errListUnknownArg       = "ERR Unknown argument %s"
	errListNoLibraryName    = "ERR library name argument was not given"
	errFlushOption          = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
	errRestorePayload       = "ERR DUMP payload version or checksum are wrong"
	errRestorePolicy        = "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
	errFunctionLoadTimeout  = "ERR FUNCTION LOAD timeout"
	errRestoreNotFunction   = "ERR given type is not a function"
	errRestoreLibraryExists = "ERR Library %s already exists"
	errRestoreUnsupported   = "ERR simulate: FUNCTION RESTORE of this payload is not supported (%s); load the libraries' code with FUNCTION LOAD instead"

	// Raised inside Lua by redis.register_function (raise adds the ERR code).
	errRegisterOutsideLoad  = "redis.register_function can only be called on FUNCTION LOAD command"
	errRegisterDuplicate    = "Function already exists in the library"
	errRegisterFirstArg     = "first argument to redis.register_function must be a string"
	errRegisterSecondArg    = "second argument to redis.register_function must be a function"
	errRegisterArgCount     = "wrong number of arguments to redis.register_function"
	errRegisterSingleArg    = "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	errRegisterKeyType      = "named argument key given to redis.register_function is not a string"
	errRegisterNameType     = "function_name argument given to redis.register_function must be a string"
	errRegisterDescType     = "description argument given to redis.register_function must be a string"
	errRegisterCallbackType = "callback argument given to redis.register_function must be a function"
	errRegisterFlagsType    = "flags argument to redis.register_function must be a table representing function flags"
	errRegisterUnknownFlag  = "unknown flag given"
	errRegisterUnknownArg   = "unknown argument given to redis.register_function"
	errRegisterNoName       = "redis.register_function must get a function name argument"
	errRegisterNoCallback   = "redis.register_function must get a callback argument"

	// The simulator's own: a command Redis has that the simulator lacks.
	errNotImplemented  = "ERR simulate: command '%s' is not implemented"
	errTableWithoutErr = "ERR simulate: the script raised an error table without an err field"
	errHRandTooMany    = "ERR simulate: a random reply of %d elements is more than the simulator builds (at most %d)"
	errDumpStream      = "ERR simulate: DUMP of a stream is not supported (its RDB form is not reproduced); copy it with XRANGE and XADD"
	errRestoreStream   = "ERR simulate: RESTORE of a stream payload is not supported; recreate the stream with XADD"
	errMigrate         = "ERR simulate: MIGRATE is not supported: the simulator has no other server to move keys to"
)

func errorReply(text string) Reply { return Reply{Kind: KindError, Str: text} }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
