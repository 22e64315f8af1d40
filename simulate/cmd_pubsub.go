package simulate

func init() {
	commands["publish"] = cmdPublish(false)
	commands["spublish"] = cmdPublish(true)
}

func cmdPublish(sharded bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if cc.Publish == nil {
			return intReply(0)
		}
		return intReply(cc.Publish(a[1], a[2], sharded))
	}
}
