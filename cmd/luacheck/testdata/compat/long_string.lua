return [==[ long ]] string ]==]
