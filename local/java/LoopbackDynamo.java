import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local on 127.0.0.1 only. Its own main (ServerRunner) has no host option and listens on
 * every interface, answering anyone with any credentials; this builds the same server from the
 * same arguments, sets its Jetty connector's host to 127.0.0.1 before it starts, and runs it.
 * local/dynamo.ts compiles it once (javac) against the bundled jar and starts it in place of the
 * jar's main.
 *
 * Prints "LoopbackDynamo listening on 127.0.0.1:<port>" once it listens; exits with status 1
 * when the server does not start (a taken port, say), having printed why.
 */
public final class LoopbackDynamo {
  private static final String HOST = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    // The Jetty server is a private field: no other way to reach its connector before it binds.
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    Connector[] connectors = jetty.getConnectors();
    if (connectors.length == 0) fail("DynamoDB Local has no connector to bind to " + HOST);
    for (Connector connector : connectors) {
      if (!(connector instanceof ServerConnector)) {
        fail("DynamoDB Local's connector " + connector + " cannot be bound to " + HOST);
      }
      ((ServerConnector) connector).setHost(HOST);
    }
    try {
      proxy.start();
    } catch (Exception error) {
      error.printStackTrace();
      System.exit(1);
    }
    // start() reports a bind failure it catches on stderr and stops the server.
    if (!jetty.isStarted()) System.exit(1);
    // local/dynamo.ts waits for this line: until then, an answer on the port may be another server's.
    System.out.println("LoopbackDynamo listening on " + HOST + ":" + ((ServerConnector) connectors[0]).getLocalPort());
    System.out.flush();
    proxy.join();
  }

  private static void fail(String message) {
    System.err.println(message);
    System.exit(1);
  }
}
